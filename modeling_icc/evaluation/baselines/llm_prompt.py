"""Zero-shot LLM prompting (the ICC paper's appendix baseline): a causal LM, told it is a visual
expert, rates a caption's concreteness with one integer from 1 (highly abstract) to N.

Decoding is greedy. The answer is parsed robustly (:func:`parse_rating`: the
first integer or number word in range, ignoring markup and surrounding
words). When greedy decoding gives nothing usable, the rating falls back to
the candidate answer ("1" ... "N") to which the model assigns the highest
likelihood right after the prompt; ``last_fallbacks`` counts those captions.
The score is ``(rating - 1) / (N - 1)``.
"""

from __future__ import annotations

import os
import re
from functools import partial

import numpy as np
import torch

from ...scoring.base import ConcretenessScorer
from ...scoring.devices import resolve_device, resolve_dtype
from ...utils.checkpoints import load_complete
from .pretrained import load_pretrained

SCALES = (3, 5, 10)
PROMPT_TEMPLATE = (
    "You are a visual expert. You rate how concrete an image caption is: how precisely a person could "
    "picture the exact image it describes. Use a scale from 1 to {n}, where 1 means highly abstract "
    "(nothing specific to see) and {n} means highly concrete (a clear, specific visual scene). "
    "Answer with a single integer from 1 to {n} and nothing else.\n\nCaption: {caption}\nRating:"
)
NUMBER_WORDS = {
    word: value
    for value, word in enumerate("zero one two three four five six seven eight nine ten".split())
    if value > 0
}
_NUMBER = re.compile(r"\b(10|[1-9]|" + "|".join(NUMBER_WORDS) + r")\b", re.IGNORECASE)


def parse_rating(answer: str, n: int) -> int | None:
    """The first rating in 1..n that ``answer`` states ("4", "**4**/5", "Rating: four"), else None.

    A number followed by a fraction bar ("4/5") counts; one that is out of range is skipped.
    """
    for match in _NUMBER.finditer(answer):
        token = match.group(1).lower()
        value = NUMBER_WORDS.get(token) or int(token)
        if 1 <= value <= n:
            return value
    return None


class LLMPromptScorer(ConcretenessScorer):
    """Concreteness from a causal LM's greedy 1..N rating of each caption."""

    def __init__(
        self,
        model_id: str | os.PathLike,
        *,
        scale: int = 5,
        template: str = PROMPT_TEMPLATE,
        device: str | None = None,
        dtype: str | None = None,
        batch_size: int = 8,
        max_new_tokens: int = 6,
    ) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if scale not in SCALES:
            raise ValueError(f"scale must be one of {SCALES}, got {scale}")
        self.scale = scale
        self.template = template
        self.batch_size = batch_size
        self.max_new_tokens = max_new_tokens
        self.device = resolve_device(device)
        self.tokenizer = load_pretrained(AutoTokenizer.from_pretrained, model_id, trust_remote_code=False)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = load_pretrained(
            partial(load_complete, AutoModelForCausalLM.from_pretrained),  # strict: no random weights
            model_id,
            dtype=resolve_dtype(dtype, self.device),
            use_safetensors=True,
        )
        self.model.to(self.device).eval()
        self.model_id = f"llm({os.fspath(model_id)}, 1-{scale})"
        self.last_fallbacks = 0

    def prompt(self, caption: str) -> str:
        """The full model input for one caption (through the chat template when the tokenizer has one)."""
        text = self.template.format(n=self.scale, caption=caption.strip())
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(
                [{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
            )
        return text

    def _encode(self, prompts: list[str]):
        add_special = not getattr(self.tokenizer, "chat_template", None)
        return self.tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=add_special).to(
            self.device
        )

    @torch.inference_mode()
    def _greedy_answers(self, prompts: list[str]) -> list[str]:
        batch = self._encode(prompts)
        output = self.model.generate(
            **batch,
            do_sample=False,
            max_new_tokens=self.max_new_tokens,
            pad_token_id=self.tokenizer.pad_token_id,
        )
        return self.tokenizer.batch_decode(output[:, batch["input_ids"].shape[1] :], skip_special_tokens=True)

    @torch.inference_mode()
    def _most_likely_rating(self, prompt: str) -> int:
        """The candidate answer with the highest total log-probability after ``prompt``."""
        candidates = [f" {value}" for value in range(1, self.scale + 1)]
        prompt_ids = self._encode([prompt])["input_ids"][0]
        best, best_logp = 1, -np.inf
        for value, candidate in enumerate(candidates, start=1):
            answer_ids = self.tokenizer(candidate, add_special_tokens=False, return_tensors="pt")["input_ids"][0]
            ids = torch.cat([prompt_ids, answer_ids.to(self.device)])[None]
            logits = self.model(input_ids=ids).logits[0, prompt_ids.shape[0] - 1 : -1].float()
            logp = torch.log_softmax(logits, dim=-1).gather(1, answer_ids.to(self.device)[:, None]).sum().item()
            if logp > best_logp:
                best, best_logp = value, logp
        return best

    def rate(self, texts: list[str]) -> np.ndarray:
        """Integer ratings 1..N, one per caption."""
        ratings = np.empty(len(texts), dtype=np.int64)
        self.last_fallbacks = 0
        for start in range(0, len(texts), self.batch_size):
            prompts = [self.prompt(text) for text in texts[start : start + self.batch_size]]
            for offset, (prompt, answer) in enumerate(zip(prompts, self._greedy_answers(prompts), strict=True)):
                rating = parse_rating(answer, self.scale)
                if rating is None:
                    self.last_fallbacks += 1
                    rating = self._most_likely_rating(prompt)
                ratings[start + offset] = rating
        return ratings

    def _score_valid(self, texts: list[str]) -> np.ndarray:
        return ((self.rate(texts) - 1) / (self.scale - 1)).astype(np.float32)
