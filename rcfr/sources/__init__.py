"""The rules source: a game walked by its `FastGame` functions, beside the compiled tree (`rcfr.tree`).

A compiled game stores every history (~50 bytes each), which caps it near 3e8 histories. Walking the rules
instead keeps memory proportional to the information sets met. This package holds what that walk is at the
tree's layer: the game object (`rules.RulesGame`), the one depth-first walk (`walk`), exact counts (`sizes`) and
abstractions given by a code function of the state (`abstraction.CodeAbstraction`). The layers above keep
their rules-path module beside the compiled one (`rcfr.sampling.rules_source`, `rcfr.sampling.rules_buffers`,
`rcfr.policy.rules`, `rcfr.evaluation.rules`, `rcfr.regrets.rules`); docs/architecture.md.
"""
