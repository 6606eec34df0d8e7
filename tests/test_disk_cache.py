"""The one disk-cache helper: where it lives, what every key holds, and how bad entries behave."""

from __future__ import annotations

import json
from importlib import metadata

from autotune_rewrite import disk_cache


def test_every_key_holds_the_schema_and_the_tool_versions(monkeypatch):
    base = disk_cache.make_key("outcomes", 1, {"kernel": "k"})
    assert disk_cache.make_key("outcomes", 1, {"kernel": "k"}) == base
    assert disk_cache.make_key("outcomes", 2, {"kernel": "k"}) != base  # schema
    assert disk_cache.make_key("bundles", 1, {"kernel": "k"}) != base  # namespace
    assert disk_cache.make_key("outcomes", 1, {"kernel": "j"}) != base  # inputs
    versions = dict(disk_cache.tool_versions())
    assert versions["libcst"] == metadata.version("libcst")
    assert versions["triton"] == metadata.version("triton")
    assert versions["autotune-rewrite"]
    # A LibCST upgrade (or Triton, or this tool) changes every key.
    bumped = tuple((n, "999" if n == "libcst" else v) for n, v in disk_cache.tool_versions())
    monkeypatch.setattr(disk_cache, "tool_versions", lambda: bumped)
    assert disk_cache.make_key("outcomes", 1, {"kernel": "k"}) != base


def test_location_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("AUTOTUNE_REWRITE_CACHE_DIR", str(tmp_path / "mine"))
    ns = disk_cache.namespace("scans", 1)
    assert ns.root == tmp_path / "mine"
    key = ns.key("x")
    assert ns.path(key) == tmp_path / "mine" / "scans" / key[:2] / f"{key}.json"


def test_round_trip_and_corrupt_or_foreign_entries_are_misses(tmp_path):
    ns = disk_cache.namespace("things", 3, tmp_path)
    key = ns.key("a")
    assert ns.read_json(key) is None
    assert ns.write_json(key, {"n": 1})
    assert ns.read_json(key) == {"n": 1}
    ns.path(key).write_text("{not json")
    assert ns.read_json(key) is None
    ns.path(key).write_text(json.dumps({"schema": 2, "value": {"n": 1}}))  # an older schema
    assert ns.read_json(key) is None
    assert ns.write_json(key, {"n": 2}) and ns.read_json(key) == {"n": 2}  # rewritten in place
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == [f"{key}.json"]  # no temp files


def test_pickles_of_the_wrong_type_or_corrupt_are_misses(tmp_path):
    ns = disk_cache.namespace("scans", 1, tmp_path, suffix=".pickle")
    key = ns.key("a")
    assert ns.write_pickle(key, (1, 2))
    assert ns.read_pickle(key, tuple) == (1, 2)
    assert ns.read_pickle(key, dict) is None
    ns.path(key).write_bytes(b"\x80garbage")
    assert ns.read_pickle(key, tuple) is None


def test_an_unwritable_cache_is_not_an_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    ns = disk_cache.namespace("things", 1, blocker)
    assert ns.write_json(ns.key("a"), 1) is False
    assert ns.read_json(ns.key("a")) is None
