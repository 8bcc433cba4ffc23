"""Expand a JSON-LD document with PyLD (a JSON-LD 1.1 processor) and report every term of the
document that expansion dropped, for tests/tests/it/manifest.rs.

  jsonld_check.py DOCUMENT.jsonld  ->  {"nodes": N, "dropped": ["<node @id>: <path>", ...]}

A member with a `null` value says "none": JSON-LD reads it as absent, and it is not counted.
Every other member of every node, at any depth, must come out of expansion as a property.
"""

import json
import sys

from pyld import jsonld


def dropped(compact, expanded, where, out):
    """Members of `compact` (an object) with no expanded property in `expanded`."""
    context = compact_context
    for key, value in compact.items():
        if key.startswith("@") or value is None:
            continue
        # A JSON literal (`@json`, a precondition's parameters) is one opaque value.
        if isinstance(context.get(key), dict) and context[key].get("@type") == "@json":
            if (vocab + key if vocab else key) not in expanded:
                out.append(f"{where}: {key}")
            continue
        iri = context.get(key, {}).get("@id") if isinstance(context.get(key), dict) else None
        iri = iri or (vocab + key if vocab else key)
        if iri not in expanded:
            out.append(f"{where}: {key}")
            continue
        if isinstance(value, dict):
            inner = expanded[iri][0]
            dropped(value, inner, f"{where}/{key}", out)
        elif isinstance(value, list):
            objects = [item for item in value if isinstance(item, dict)]
            inner = [item for item in expanded[iri] if isinstance(item, dict) and "@value" not in item and "@id" not in item]
            for index, (item, expanded_item) in enumerate(zip(objects, inner)):
                dropped(item, expanded_item, f"{where}/{key}/{index}", out)
            if len(objects) != len(inner):
                out.append(f"{where}: {key} (objects)")


document = json.load(open(sys.argv[1]))
compact_context = document["@context"]
vocab = compact_context.get("@vocab")
expanded = jsonld.expand(document)
by_id = {node["@id"]: node for node in expanded}
report = []
for node in document["@graph"]:
    if node["@id"] not in by_id:
        report.append(f"{node['@id']}: the whole node")
        continue
    dropped(node, by_id[node["@id"]], node["@id"], report)
print(json.dumps({"nodes": len(by_id), "dropped": report}))
