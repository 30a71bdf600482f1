"""Glossary terms in translations: every occurrence of a source term comes out as its target.

- ``matching``: where a glossary's terms occur in a text (whole words, longest first, case
  as a user means it) and what each occurrence becomes;
- ``entries``: a glossary's entries read from JSON, TSV or CSV and checked;
- ``masking``: each occurrence replaced by a placeholder an engine copies, and put back;
- ``apply``: one engine call for a batch of segments, each with its own glossary, with a
  fallback for the segments whose placeholders did not come back.
"""

from __future__ import annotations

from dragoman.terms.apply import Item, keep_terms
from dragoman.terms.matching import Entry, Hit, Terms

__all__ = ["Entry", "Hit", "Item", "Terms", "keep_terms"]
