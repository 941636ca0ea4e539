"""Our own questions: which estimator, targets, sampler or evaluation works, measured."""
