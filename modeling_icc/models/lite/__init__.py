"""The embedded zero-download lite model: word norms and caption-form cues, a calibrated linear model, pure Python."""
