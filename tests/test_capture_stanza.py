"""Writing captured specs: the TOML emitter, the text merge, and that check reads the result."""

from __future__ import annotations

import tomllib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autotune_rewrite.check import launch_spec
from autotune_rewrite.check import spec_toml
from autotune_rewrite.gpu.capture import stanza
from autotune_rewrite.gpu.capture.capture import default_settings_file
from autotune_rewrite.errors import UserError
from autotune_rewrite.settings import load_settings

T16 = spec_toml.Table("mla/k.py::kern", "captured BLOCK_H=16", (("Q", "*bf16"), ("n", "i32"), ("eps", "fp32")),
                   (("BLOCK_H", 16), ("MODE", "fast"), ("FLAG", True)), (("n", 2048),), ("captured 3 compile(s)",))
T32 = spec_toml.Table("mla/k.py::kern", "captured BLOCK_H=32", (("Q", "*bf16"), ("n", "i32")), (("BLOCK_H", 32),), (("n", 1),))

EXISTING = """\
# my settings
arch = ["sm_120"]  # the fleet

# hand-written spec
[[kernels]]
kernel = "mla/k.py::kern"
spec = "captured BLOCK_H=16"
types = { Q = "*fp16", n = "i32" }
constexprs = { BLOCK_H = 16 }

# another kernel, kept
[[kernels]]
kernel = "other.py::k2"
spec = "default"
types = { x = "*fp32" }

[variants]
buckets = [8, 48]
"""


@given(st.one_of(st.text(), st.integers(), st.booleans(),
                 st.floats(allow_nan=False), st.floats(allow_nan=True, allow_infinity=True).filter(lambda f: f != f or abs(f) == float("inf"))))
def test_toml_values_round_trip(value):
    got = tomllib.loads(f"v = {spec_toml.toml_value(value)}")["v"]
    if isinstance(value, float) and value != value:
        assert got != got
    else:
        assert got == value and type(got) is type(value)


@given(st.text(min_size=1))
def test_any_key_round_trips(key):
    doc = tomllib.loads(f"t = {spec_toml.inline_table(((key, 1),))}")
    assert doc["t"] == {key: 1}


def test_new_file_round_trip_and_check_reads_it(tmp_path):
    path = tmp_path / "autotune-rewrite.toml"
    stanza.merge_file(path, [T16, T32])
    doc = tomllib.loads(path.read_text())
    assert doc["kernels"] == [spec_toml.table_dict(T16), spec_toml.table_dict(T32)]
    entries = launch_spec.spec_entries(load_settings(tmp_path).raw)
    assert [(e.kernel, e.spec) for e in entries] == [("mla/k.py::kern", "captured BLOCK_H=16"),
                                                     ("mla/k.py::kern", "captured BLOCK_H=32")]
    assert dict(entries[0].constexprs) == {"BLOCK_H": 16, "MODE": "fast", "FLAG": True}
    assert path.read_text().startswith("# captured 3 compile(s)\n[[kernels]]\n")


def test_merge_replaces_same_spec_in_place_and_keeps_the_rest_byte_for_byte():
    merged = stanza.merge_text(EXISTING, [T16, T32])
    doc = tomllib.loads(merged)
    assert doc["arch"] == ["sm_120"] and doc["variants"] == {"buckets": [8, 48]}
    assert doc["kernels"] == [spec_toml.table_dict(T16), {"kernel": "other.py::k2", "spec": "default", "types": {"x": "*fp32"}},
                              spec_toml.table_dict(T32)]
    # everything that was not replaced is still there, in order, with its comments
    for keep in ("# my settings\narch = [\"sm_120\"]  # the fleet\n\n# hand-written spec\n",
                 "# another kernel, kept\n[[kernels]]\nkernel = \"other.py::k2\"",
                 "[variants]\nbuckets = [8, 48]\n"):
        assert keep in merged
    assert 'Q = "*fp16"' not in merged
    # merging again is idempotent
    assert stanza.merge_text(merged, [T16, T32]) == merged


def test_merge_into_pyproject_uses_the_tool_prefix(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text('[project]\nname = "x"\n\n[tool.autotune-rewrite]\narch = ["sm_90"]\n')
    assert default_settings_file(tmp_path) == path  # an autotune-rewrite.toml would shadow the table
    stanza.merge_file(path, [T32])
    text = path.read_text()
    assert text.startswith('[project]\nname = "x"\n\n[tool.autotune-rewrite]\narch = ["sm_90"]\n')
    settings = load_settings(tmp_path)
    assert settings.arch == ("sm_90",)
    (entry,) = launch_spec.spec_entries(settings.raw)
    assert entry.spec == "captured BLOCK_H=32" and entry.values == (("n", 1),)


def test_default_file_is_autotune_rewrite_toml_otherwise(tmp_path):
    assert default_settings_file(tmp_path) == tmp_path / "autotune-rewrite.toml"
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert default_settings_file(tmp_path) == tmp_path / "autotune-rewrite.toml"


def test_invalid_existing_file_is_a_user_error(tmp_path):
    path = tmp_path / "autotune-rewrite.toml"
    path.write_text("arch = [\n")
    with pytest.raises(UserError, match="invalid TOML"):
        stanza.merge_file(path, [T16])
    assert path.read_text() == "arch = [\n"  # nothing written


def test_unwritable_values_are_refused():
    with pytest.raises(TypeError):
        spec_toml.toml_value(None)
