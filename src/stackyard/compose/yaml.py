"""The one YAML loader of the service: safe (plain data only), bounded.

YAML aliases let a few hundred bytes stand for billions of nodes ("billion laughs"), and
a merge key that refers to its own mapping (`x: &a {<<: *a}`) never ends for some
parsers. Before anything is built, the node graph is walked once, each node's expanded
size memoised (so the count itself is linear): documents that would expand beyond
`MAX_NODES` nodes, use more than `MAX_ALIASES` aliases, or refer to themselves are refused
with Invalid. So are keys given twice in one mapping: compose refuses them, and keeping
the last one silently would let this loader see another file than compose does. Input
is capped at `MAX_BYTES`, nesting at `MAX_DEPTH` (the parser's cost grows with the
product of flow nesting and document length, and its composer recurses). Compose's own
tags (`!reset`, `!override`) and any other local tag load as the plain value they carry.

The pure-Python loader is used, not libyaml's: only it lets the nesting be bounded while
scanning (libyaml crashes the process on very deep nesting and takes minutes on a
megabyte of `[`); a typical compose file still loads in milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import yaml

from stackyard.errors import Invalid

MAX_BYTES = 1024 * 1024
#: Nodes of a document once every alias is expanded.
MAX_NODES = 100_000
#: Alias uses in a document.
MAX_ALIASES = 1000
#: Nested collections (block or flow).
MAX_DEPTH = 100

_TOO_DEEP = f"Invalid YAML: nested too deeply (more than {MAX_DEPTH} levels)"


class _Loader(yaml.SafeLoader):
    """SafeLoader with bounded nesting that keeps unknown local tags as plain values."""

    _depth = 0

    def fetch_flow_collection_start(self, TokenClass: type[yaml.Token]) -> None:
        if self.flow_level >= MAX_DEPTH:
            raise Invalid(_TOO_DEEP)
        super().fetch_flow_collection_start(TokenClass)

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise Invalid(_TOO_DEEP)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _untagged(loader: _Loader, node: yaml.Node) -> object:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(cast(yaml.ScalarNode, node))


_Loader.add_constructor(None, _untagged)


def load_yaml(text: str) -> object:
    """One YAML document as plain data (the first, when there are several)."""
    documents = load_yaml_all(text)
    return documents[0] if documents else None


def load_yaml_all(text: str) -> list[object]:
    """Every YAML document of `text` as plain data; Invalid when it is not YAML, too
    large, or expands too far."""
    if len(text) > MAX_BYTES:
        raise Invalid(f"YAML file too large (more than {MAX_BYTES // 1024} KiB)")
    return load_documents(_Loader, text, check_expansion)


def load_documents(
    make_loader: Callable[[str], Any], text: str, check: Callable[[yaml.Node], object]
) -> list[object]:
    """Every document a loader of `text` gives, each node `check`ed before it is
    constructed; YAML's own errors (and too deep a nesting) as Invalid."""
    loader = None
    try:
        loader = make_loader(text)
        documents = []
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            check(node)
            documents.append(loader.construct_document(node))
        return documents
    except yaml.MarkedYAMLError as exc:
        raise Invalid(f"Invalid YAML: {_describe(exc)}") from None
    except yaml.reader.ReaderError as exc:
        raise Invalid(f"Invalid YAML: unacceptable character at position {exc.position}") from None
    except yaml.YAMLError as exc:
        raise Invalid(f"Invalid YAML: {type(exc).__name__}") from None
    except RecursionError:
        raise Invalid(_TOO_DEEP) from None
    finally:
        if loader is not None:
            loader.dispose()


def _describe(exc: yaml.MarkedYAMLError) -> str:
    """The problem and where, without the snippet of the file PyYAML adds."""
    words = exc.problem or exc.context or "syntax error"
    mark = exc.problem_mark or exc.context_mark
    if mark is None:
        return words
    return f"{words} (line {mark.line + 1}, column {mark.column + 1})"


def check_expansion(root: yaml.Node) -> int:
    """The expanded node count of a composed document; Invalid beyond the bounds.

    Iterative (no recursion limit) and linear: each node's expanded size is computed
    once. A node reached again is an alias use; a node reached from inside itself is a
    recursive alias.
    """
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    aliases = 0
    # (node, children iterator) frames of a depth-first walk.
    stack: list[tuple[yaml.Node, list[yaml.Node]]] = []

    def children(node: yaml.Node) -> list[yaml.Node]:
        if isinstance(node, yaml.MappingNode):
            return [part for pair in node.value for part in pair]
        if isinstance(node, yaml.SequenceNode):
            return list(node.value)
        return []

    def enter(node: yaml.Node) -> None:
        if isinstance(node, yaml.MappingNode):
            _check_unique_keys(node)
        on_path.add(id(node))
        stack.append((node, children(node)))

    enter(root)
    while stack:
        node, pending = stack[-1]
        if pending:
            child = pending.pop()
            key = id(child)
            if key in on_path:
                raise Invalid("Invalid YAML: an alias refers to the node that contains it")
            if key in sizes:
                aliases += 1
                if aliases > MAX_ALIASES:
                    raise Invalid(f"Invalid YAML: too many YAML aliases (more than {MAX_ALIASES})")
                continue
            enter(child)
            continue
        stack.pop()
        on_path.discard(id(node))
        total = 1 + sum(sizes[id(child)] for child in children(node))
        if total > MAX_NODES:
            raise Invalid(
                f"Invalid YAML: too many YAML aliases: the document expands to more than "
                f"{MAX_NODES} nodes"
            )
        sizes[id(node)] = total
    return sizes[id(root)]


def _check_unique_keys(node: yaml.MappingNode) -> None:
    """Compose refuses a key given twice in one mapping; so does this loader, rather than
    keep the last one silently (merged keys, `<<`, may be overridden)."""
    seen: set[tuple[str, str]] = set()
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
            continue
        identity = (key.tag, key.value)
        if identity in seen:
            mark = key.start_mark
            raise Invalid(
                f"Invalid YAML: duplicate key {key.value!r} "
                f"(line {mark.line + 1}, column {mark.column + 1})"
            )
        seen.add(identity)
