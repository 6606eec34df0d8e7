"""Writing captured specs with tomlkit: the table form, the merge, and that check reads the result."""

from __future__ import annotations

import tomllib

import pytest
from hypothesis import given, settings as hsettings
from hypothesis import strategies as st

from autotune_rewrite.spec import spec_toml
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
kernel    = 'other.py::k2'   # odd spacing, single quotes
spec = "default"
types = {x="*fp32"}

[variants]
buckets = [8, 48]
"""

PYPROJECT = """\
[project]
name = "served"   # keep me
dependencies = [
    "torch",  # pinned elsewhere
]

[tool.autotune-rewrite]
arch = ["sm_120"]

[[tool.autotune-rewrite.kernels]]
kernel = "mla/k.py::kern"
spec = "captured BLOCK_H=32"
types = { Q = "*fp16" }

[tool.autotune-rewrite.variants]
buckets = [8, 48]  # from the A/B run

[tool.ruff]
line-length = 120
"""

scalars = st.one_of(st.text(), st.integers(min_value=-2**63, max_value=2**63 - 1), st.booleans(),
                    st.floats(allow_nan=False))


@hsettings(max_examples=50, deadline=None)
@given(st.text(min_size=1), st.text(), st.dictionaries(st.text(min_size=1), scalars, max_size=3))
def test_any_names_and_values_round_trip(kernel, spec, constexprs):
    table = spec_toml.Table(kernel, spec, (("q", "*bf16"),), tuple(constexprs.items()))
    doc = tomllib.loads(spec_toml.render_table(table, "tool.autotune-rewrite."))
    assert doc["tool"]["autotune-rewrite"]["kernels"] == [spec_toml.table_dict(table)]


def test_new_file_round_trip_and_check_reads_it(tmp_path):
    path = tmp_path / "autotune-rewrite.toml"
    stanza.merge_file(path, [T16, T32])
    doc = tomllib.loads(path.read_text())
    assert doc["kernels"] == [spec_toml.table_dict(T16), spec_toml.table_dict(T32)]
    entries = load_settings(tmp_path).kernels
    assert [(e.kernel, e.spec) for e in entries] == [("mla/k.py::kern", "captured BLOCK_H=16"),
                                                     ("mla/k.py::kern", "captured BLOCK_H=32")]
    assert dict(entries[0].constexprs) == {"BLOCK_H": 16, "MODE": "fast", "FLAG": True}
    # our comments live inside the table, so a later merge replaces them with it
    assert path.read_text().startswith("[[kernels]]\n# captured 3 compile(s)\nkernel = ")


def test_merge_replaces_same_spec_in_place_and_keeps_the_rest_byte_for_byte():
    merged = stanza.merge_text(EXISTING, [T16, T32])
    doc = tomllib.loads(merged)
    assert doc["arch"] == ["sm_120"] and doc["variants"] == {"buckets": [8, 48]}
    assert doc["kernels"] == [spec_toml.table_dict(T16), {"kernel": "other.py::k2", "spec": "default", "types": {"x": "*fp32"}},
                              spec_toml.table_dict(T32)]
    head, replaced_and_rest = EXISTING.split("[[kernels]]\n", 1)
    kept = EXISTING[EXISTING.index("# another kernel, kept"):EXISTING.index("[variants]")]
    assert merged.startswith(head + "[[kernels]]\n# captured 3 compile(s)\n")
    assert kept.rstrip("\n") + "\n\n[[kernels]]\n" in merged  # the other table exactly as written
    assert merged.endswith("[variants]\nbuckets = [8, 48]\n")
    assert 'Q = "*fp16"' not in merged
    assert stanza.merge_text(merged, [T16, T32]) == merged  # idempotent


def test_merge_into_a_pyproject_keeps_every_other_byte(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text(PYPROJECT)
    assert default_settings_file(tmp_path) == path  # an autotune-rewrite.toml would shadow the table
    stanza.merge_file(path, [T32, T16])
    text = path.read_text()
    replaced = ('[[tool.autotune-rewrite.kernels]]\nkernel = "mla/k.py::kern"\nspec = "captured BLOCK_H=32"\n'
                'types = { Q = "*fp16" }\n')
    before, after = PYPROJECT.split(replaced)
    # Everything outside the kernels array is byte-identical, in its place.
    assert text.startswith(before) and text.endswith(after)
    middle = text[len(before):len(text) - len(after)]
    assert middle == (spec_toml.render_table(T32, "tool.autotune-rewrite.") + "\n"
                      + spec_toml.render_table(T16, "tool.autotune-rewrite."))  # replaced in place, then appended
    settings = load_settings(tmp_path)
    assert settings.arch == ("sm_120",) and settings.variants.buckets == (8, 48)
    assert [(e.spec, e.values) for e in settings.kernels] == [("captured BLOCK_H=32", (("n", 1),)),
                                                              ("captured BLOCK_H=16", (("n", 2048),))]
    assert stanza.merge_text(text, [T32, T16], "tool.autotune-rewrite.") == text


def test_merge_into_a_pyproject_without_the_table(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text('[project]\nname = "x"\n')
    stanza.merge_file(path, [T32])
    assert path.read_text() == '[project]\nname = "x"\n\n' + spec_toml.render_table(T32, "tool.autotune-rewrite.")
    assert load_settings(tmp_path).kernels[0].spec == "captured BLOCK_H=32"


def test_default_file_is_autotune_rewrite_toml_otherwise(tmp_path):
    assert default_settings_file(tmp_path) == tmp_path / "autotune-rewrite.toml"
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"  # mentions autotune-rewrite in a comment\n')
    assert default_settings_file(tmp_path) == tmp_path / "autotune-rewrite.toml"


def test_invalid_existing_file_is_a_user_error(tmp_path):
    path = tmp_path / "autotune-rewrite.toml"
    path.write_text("arch = [\n")
    with pytest.raises(UserError, match="invalid TOML"):
        stanza.merge_file(path, [T16])
    assert path.read_text() == "arch = [\n"  # nothing written


def test_a_kernels_key_that_is_not_an_array_of_tables_is_refused(tmp_path):
    path = tmp_path / "autotune-rewrite.toml"
    path.write_text('kernels = "oops"\n')
    with pytest.raises(UserError, match="not an array of tables"):
        stanza.merge_file(path, [T16])
    assert path.read_text() == 'kernels = "oops"\n'
