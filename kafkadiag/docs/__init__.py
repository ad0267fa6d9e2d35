"""The pages of docs/ that are rendered from the code, so that they cannot drift from it.

`python -m kafkadiag.docs inputs > docs/inputs.md` renders the inputs page from the format
registry; docs/rules.md comes from `kafkadiag rules --format markdown`. Only light modules are
imported here (the model, format detection, the read limits): no parser, collector or rule.
"""
