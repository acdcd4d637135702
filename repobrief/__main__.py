"""`python -m repobrief …` runs the CLI."""

from repobrief.cli import entry

entry()
