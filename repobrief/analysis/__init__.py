"""Offline analysis: rules and statistics that read PRs the way a maintainer would.

`files` sorts paths into kinds, `classify` finds modules, change type and theme
terms, `themes` discovers the week's topics against earlier weeks, `scoring`
computes the explainable importance score, `risks` runs the risk detectors, and
`context` gathers the week's shared facts (calibration, core paths, diffs).
"""
