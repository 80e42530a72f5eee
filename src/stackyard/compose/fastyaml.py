"""The service's bounded YAML loader (`stackyard.compose.yaml`), with libyaml doing the
scanning and composing where that is provably safe: about ten times faster, for the
stack list, which reads every compose file of the host at once.

`stackyard.compose.yaml` uses the pure-Python parser because libyaml cannot be bounded
while it works: its composer recurses once per nesting level (a few ten thousand levels
crash the process) and its scanner takes time quadratic in the flow nesting (minutes on a
megabyte of `[`). Both costs are bounded by the text itself, so a cheap screen (regular
expressions and counts, at C speed) decides which parser runs:

- flow collections: at most `MAX_DEPTH` `[` and `{` in the whole text (so the flow
  nesting, and the scanner's per-token cost, stays below it);
- block collections: a nested block collection starts on a new, more indented line, or
  after an indicator (`- `, `? `, `: `) on the same line. The nesting is therefore at most
  twice the deepest indentation plus the longest run of indicators on one line, and both
  are capped (`MAX_INDENT`, `MAX_INDICATORS`), so the composer recurses a few hundred
  levels at most.

Text that passes is loaded by libyaml; text that does not (or any text, where PyYAML was
built without libyaml) by the pure-Python loader. Either way the result is the same
plain data, refused for the same reasons: the composed graph goes through the same
`check_expansion` (aliases, self-reference, duplicate keys), nesting beyond
`MAX_DEPTH` is refused, local tags load as the value they carry, and errors are Invalid
with the problem and its line, never a snippet of the file.
"""

from __future__ import annotations

import re

import yaml

from stackyard.compose import yaml as bounded
from stackyard.compose.yaml import (
    MAX_BYTES,
    MAX_DEPTH,
    check_expansion,
    load_documents,
    load_yaml_all,
)
from stackyard.errors import Invalid

#: Deepest indentation (in columns) of text given to libyaml.
MAX_INDENT = 160
#: Longest run of block indicators on one line of text given to libyaml.
MAX_INDICATORS = 40

_INDENT = re.compile(r"^[ \t]*", re.MULTILINE)
_INDICATOR_RUN = re.compile(r"(?:[-?:](?:[ \t]+|$))+", re.MULTILINE)

_LIBYAML = bool(getattr(yaml, "__with_libyaml__", False))


def libyaml_safe(text: str) -> bool:
    """Whether libyaml's nesting and scanning costs are bounded for `text` (see the module)."""
    if not _LIBYAML or len(text) > MAX_BYTES:
        return False
    if text.count("[") + text.count("{") > MAX_DEPTH:
        return False
    if max(map(len, _INDENT.findall(text)), default=0) > MAX_INDENT:
        return False
    runs = _INDICATOR_RUN.findall(text)
    return max((run.count("-") + run.count("?") + run.count(":") for run in runs), default=0) <= (
        MAX_INDICATORS
    )


def load_yaml_all_fast(text: str) -> list[object]:
    """`stackyard.compose.yaml.load_yaml_all`, through libyaml where `libyaml_safe`."""
    if not libyaml_safe(text):
        return load_yaml_all(text)
    # Without `*` in the text there is no alias: no node is shared, the expansion is the
    # node count (bounded by the text), so one walk checks depth and keys.
    return load_documents(_CLoader, text, _check_aliased if "*" in text else _check_tree)


def _check_aliased(node: yaml.Node) -> None:
    check_expansion(node)
    _check_depth(node)


if _LIBYAML:

    class _CLoader(yaml.CSafeLoader):
        """libyaml's safe loader keeping unknown local tags as plain values."""

    _CLoader.add_constructor(None, bounded._untagged)


def _check_tree(root: yaml.Node) -> None:
    """For a document without aliases (a tree): nesting beyond MAX_DEPTH and duplicate
    keys are refused, as `check_expansion` and `_check_depth` refuse them, in one walk."""
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise Invalid(bounded._TOO_DEEP)
        if isinstance(node, yaml.MappingNode):
            bounded._check_unique_keys(node)
            stack.extend((part, depth + 1) for pair in node.value for part in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((child, depth + 1) for child in node.value)


def _check_depth(root: yaml.Node) -> None:
    """Nesting beyond MAX_DEPTH is refused, as the pure loader does while composing (an
    alias counts as one node there: each node is walked once)."""
    seen: set[int] = set()
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise Invalid(bounded._TOO_DEEP)
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            stack.extend((part, depth + 1) for pair in node.value for part in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((child, depth + 1) for child in node.value)
