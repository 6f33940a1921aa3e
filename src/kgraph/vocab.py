"""The `kg:` vocabulary as the exporters see it: namespaces and how attributes map to terms.

`schemas/kgraph.ttl` documents every term; this module is the one place that decides which
graph attribute becomes which predicate, so RDF, JSON-LD and the docs cannot drift apart.
"""

from __future__ import annotations

from functools import cache

KG = "https://w3id.org/kgraph/ns#"
DEFAULT_BASE = "https://w3id.org/kgraph/id/"

NAMESPACES: dict[str, str] = {
    "kg": KG,
    "dcterms": "http://purl.org/dc/terms/",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "prov": "http://www.w3.org/ns/prov#",
}

RDF_TYPE = NAMESPACES["rdf"] + "type"
RDFS_LABEL = NAMESPACES["rdfs"] + "label"

# Attributes that use a standard term instead of a kg: one.
STANDARD_TERMS: dict[str, str] = {
    "title": NAMESPACES["dcterms"] + "title",
    "date": NAMESPACES["dcterms"] + "date",
    "prefLabel": NAMESPACES["skos"] + "prefLabel",
    "altLabel": NAMESPACES["skos"] + "altLabel",
    "definition": NAMESPACES["skos"] + "definition",
    "notation": NAMESPACES["skos"] + "notation",
    "inScheme": NAMESPACES["skos"] + "inScheme",
}

# Extra classes a node of a kind also has (a pattern is a SKOS concept).
EXTRA_TYPES: dict[str, tuple[str, ...]] = {
    "DesignPattern": (NAMESPACES["skos"] + "Concept",),
    "PatternCatalog": (NAMESPACES["skos"] + "ConceptScheme",),
}

# Relations that use a standard term.
STANDARD_RELATIONS: dict[str, str] = {
    "inScheme": NAMESPACES["skos"] + "inScheme",
}


@cache
def predicate(name: str) -> str:
    """The property IRI of an attribute or relation name; cached, as exports ask millions of
    times for a few dozen names."""
    return STANDARD_TERMS.get(name) or STANDARD_RELATIONS.get(name) or KG + name


def class_iri(kind: str) -> str:
    return KG + kind
