"""A ranking signal is declared once, on ``Signals`` (model.py): its JSON shape and its
HTTP schema are read off the dataclass, so adding one touches model.py, search/retrieve.py
(computing it) and config.py (its weight) and nothing else (docs/ARCHITECTURE.md)."""

from dataclasses import field, fields, make_dataclass

from fastapi.testclient import TestClient

from engram import FakeHashEmbedder, Memory, Settings
from engram.model import Signals
from engram.server import responses
from engram.server.http import create_app
from engram.shapes import signals_data

# a signal added the way a contributor adds one: a field with its default and its doc
WithNovelty = make_dataclass(
    "Signals", [("novelty", float, field(default=0.0, metadata={"doc": "how new the memory is to this thread"}))],
    bases=(Signals,), frozen=True, slots=True)


def test_a_new_signal_reaches_the_json_shape_without_an_edit():
    data = signals_data(WithNovelty(lexical=0.5, novelty=0.25))
    assert data["novelty"] == 0.25 and data["lexical"] == 0.5
    assert list(data) == [f.name for f in fields(WithNovelty)]


def test_a_new_signal_reaches_the_http_schema_without_an_edit():
    model = responses.signals_model(WithNovelty)
    schema = model.model_json_schema()
    assert schema["properties"]["novelty"] == {
        "description": "how new the memory is to this thread", "title": "Novelty", "type": "number"}
    assert set(schema["required"]) == {f.name for f in fields(WithNovelty)}
    model.model_validate(signals_data(WithNovelty(novelty=1.0)))


def test_the_served_schema_names_every_signal_with_its_description(tmp_path):
    with Memory.open(str(tmp_path / "m.db"), embedder=FakeHashEmbedder(),
                     settings=Settings(auto_worker=False)) as memory:
        spec = TestClient(create_app(memory, api_keys=None, tenant="acme")).get("/openapi.json").json()
    described = spec["components"]["schemas"]["SignalsOut"]["properties"]
    assert set(described) == {f.name for f in fields(Signals)}
    assert all(described[f.name]["description"] == f.metadata["doc"] for f in fields(Signals))
    assert spec["components"]["schemas"]["HitOut"]["properties"]["signals"] == {"$ref": "#/components/schemas/SignalsOut"}
