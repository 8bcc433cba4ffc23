"""SHACL checks with pyshacl, for tests/tests/it/shacl.rs. Each mode prints one JSON answer:

  meta SHAPES.ttl             {"conforms", "report"}: the shapes graph against SHACL-SHACL
  conform SHAPES.ttl DATA.nt  {"conforms", "results": [{"focus", "path", "component"}]}
  cases SHAPES.ttl CASES.json one list per case: the properties (`sh:name`) SHACL reports

`cases` reads {"shape": IRI, "cases": [JSON object, ...]} and writes each case as the store
writes an instance (DESIGN §4.5): one triple per field value, the value typed by the field's
`sh:datatype` when it fits it (so a value of the wrong JSON type stays of the wrong type),
`null` as absent, a list as one triple per item, nested values as `rdf:JSON` literals, and a
reference as an IRI whose target is taken to exist (the store checks that, not the validator).
"""

import json
import re
import sys

from pyshacl import validate
from pyshacl.entrypoints import meta_validate
from rdflib import RDF, XSD, BNode, Graph, Literal, Namespace, URIRef

SH = Namespace("http://www.w3.org/ns/shacl#")
RDF_JSON = URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON")
IRI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|\\^`]*$")


def results(report):
    out = []
    for result in report.subjects(RDF.type, SH.ValidationResult):
        out.append({
            "focus": str(report.value(result, SH.focusNode)),
            "path": str(report.value(result, SH.resultPath)),
            "component": str(report.value(result, SH.sourceConstraintComponent)),
        })
    return out


def properties(shapes, shape):
    """sh:name -> property shape, the shape's own and those of the shapes it `sh:node`s."""
    found = {}
    for prop in shapes.objects(shape, SH.property):
        found[str(shapes.value(prop, SH.name))] = prop
    for parent in shapes.objects(shape, SH.node):
        found.update(properties(shapes, parent))
    return found


def number_text(value):
    return str(value) if isinstance(value, int) else repr(value)


def term(value, shapes, prop, data):
    datatype = shapes.value(prop, SH.datatype)
    target = shapes.value(prop, SH["class"])
    if isinstance(value, (dict, list)):
        return Literal(json.dumps(value), datatype=RDF_JSON)
    if datatype == RDF_JSON:
        return Literal(json.dumps(value), datatype=RDF_JSON)
    if target is not None and isinstance(value, str):
        if IRI.match(value):
            data.add((URIRef(value), RDF.type, target))
            return URIRef(value)
        return Literal(value)
    if isinstance(value, bool):
        return Literal(value)
    if isinstance(value, (int, float)):
        if datatype == XSD.double:
            return Literal(number_text(value), datatype=XSD.double)
        if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
            return Literal(int(value), datatype=XSD.integer)
        if isinstance(value, float):
            return Literal(number_text(value), datatype=XSD.double)
        return Literal(value, datatype=XSD.integer)
    if datatype == XSD.dateTime:
        return Literal(value, datatype=XSD.dateTime)
    return Literal(value)


def cases(shapes_file, cases_file):
    shapes = Graph().parse(shapes_file, format="turtle")
    spec = json.load(open(cases_file))
    shape = URIRef(spec["shape"])
    props = properties(shapes, shape)
    data = Graph()
    focuses = []
    for index, case in enumerate(spec["cases"]):
        focus = URIRef(f"urn:trails:case:{index}")
        focuses.append(str(focus))
        shapes.add((shape, SH.targetNode, focus))
        data.add((focus, RDF.type, URIRef("urn:trails:Case")))
        for name, value in case.items():
            prop = props.get(name)
            if prop is None or value is None:
                continue
            path = shapes.value(prop, SH.path)
            for item in (value if isinstance(value, list) else [value]):
                data.add((focus, path, term(item, shapes, prop, data)))
    conforms, report, _ = validate(data, shacl_graph=shapes, inference="none", allow_warnings=True)
    names = {str(shapes.value(prop, SH.path)): name for name, prop in props.items()}
    reported = {focus: set() for focus in focuses}
    for result in results(report):
        if result["focus"] in reported:
            reported[result["focus"]].add(names.get(result["path"], result["path"]))
    return [sorted(reported[focus]) for focus in focuses]


def main():
    mode = sys.argv[1]
    if mode == "meta":
        conforms, _, text = meta_validate(sys.argv[2], shacl_graph_format="turtle")
        print(json.dumps({"conforms": conforms, "report": text}))
    elif mode == "conform":
        conforms, report, _ = validate(
            sys.argv[3], shacl_graph=sys.argv[2], data_graph_format="nt", shacl_graph_format="turtle",
            inference="none",
        )
        print(json.dumps({"conforms": conforms, "results": results(report)}))
    elif mode == "cases":
        print(json.dumps(cases(sys.argv[2], sys.argv[3])))
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
