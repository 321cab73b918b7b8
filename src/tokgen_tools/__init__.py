"""tokgen_tools: the machinery around the lessons, not a lesson itself.

`runner` executes the notebooks (what run_all.sh calls); `readme` writes README.md's tables
from data/. Both import `tokgen`; the notebooks never import them.
"""
