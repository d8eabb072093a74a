"""brainstorm-census: crawl brainstorm session folders, check the schema's rules, report."""

__version__ = "0.1.0"
