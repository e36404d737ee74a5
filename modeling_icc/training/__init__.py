"""Everything that trains or fits a model, kept out of ``models/`` (configuration and modeling only):
the SBA projector (``sba_projector``), the teacher-score pipeline and the student's distillation
(``distillation/``), the zero-download models' fits (``fit_mini``, ``fit_lite``, ``build_lite_lexicon``)
and the training scripts' shared ``TrainingArguments`` (``arguments``)."""
