"""A repository's history as an input: what changed together, read with git.

This package knows nothing of reviews. `changesets` reads the first-parent log's changed
file names; `coupling` counts which files change together (code-maat's measure, renames
followed).
"""
