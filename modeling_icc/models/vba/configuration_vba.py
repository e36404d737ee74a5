"""Settings of the visual-bottleneck autoencoder (VBA), the paper's by default: one dataclass taken by
``VBAPipeline``, nested by the pipeline config, parsed by the scripts and read by the aveCLIP baseline."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class VBAConfig:
    """Stable Diffusion 2 at 768 px (DPM-Solver multistep, 20 steps, guidance 9) -> BLIP-2
    OPT-2.7B (COCO) prompted with "a photo of", 5 beams, 5 captions -> BERTScore F1
    (RoBERTa-large, layer 17), best of the 5. ``min_new_tokens`` fixes caption length
    for speed benchmarks; leave it unset to score. ``compile`` runs the diffusion UNet, the teacher's main
    cost, through ``torch.compile`` (off by default: same settings as the paper, a compile of about
    a minute before the first images; see docs/teachers.md for what it saves)."""

    text_to_image: str = field(
        default="stabilityai/stable-diffusion-2",
        metadata={"help": "diffusers text-to-image id or path", "aliases": ["--t2i"]},
    )
    captioner: str = field(default="Salesforce/blip2-opt-2.7b-coco", metadata={"help": "BLIP-2 id or path"})
    bertscore_model: str = field(default="roberta-large", metadata={"help": "BERTScore model id or path"})
    bertscore_num_layers: int | None = field(default=17, metadata={"aliases": ["--bertscore-layers"]})
    scheduler: str = field(default="DPMSolverMultistepScheduler", metadata={"help": "a diffusers scheduler class"})
    num_inference_steps: int = field(default=20, metadata={"help": "diffusion steps", "aliases": ["--steps"]})
    guidance_scale: float = field(default=9.0, metadata={"aliases": ["--guidance"]})
    size: int = field(default=768, metadata={"help": "image height and width"})
    prompt: str = field(default="a photo of", metadata={"help": "BLIP-2 prompt, removed from its captions"})
    num_beams: int = 5
    num_return_sequences: int = 5
    max_new_tokens: int = 30
    min_new_tokens: int | None = None
    compile: bool = field(default=False, metadata={"help": "torch.compile the diffusion UNet"})
