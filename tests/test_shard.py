"""``run --shard I/N``: N jobs cover each selected case exactly once, by a stable hash of its id;
``report --store DIR`` merges the shard stores into one matrix."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.run import BadPattern, RunConfig, in_shard, parse_shard, select_cases
from harness.suites import onnx_official as official

ROOT = Path(__file__).resolve().parent.parent


def test_parse_shard_rejects_what_is_not_i_of_n():
    assert parse_shard("2/4") == (2, 4)
    for bad in ("0/4", "5/4", "2", "a/b", "2/0", "-1/3"):
        with pytest.raises(BadPattern, match="--shard"):
            parse_shard(bad)


def test_the_split_does_not_depend_on_the_process():
    """Python's own str hash changes with PYTHONHASHSEED; the shard of a case must not."""
    ids = [f"operators/Clip-11/opset13/float32/ex{i}" for i in range(40)]
    code = ("import sys; from harness.run import in_shard; "
            f"print([[i for i in range(1, 4) if in_shard(c, i, 3)] for c in {ids!r}])")
    seen = set()
    for seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                             env=dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT))).stdout
        seen.add(out)
    assert len(seen) == 1
    owners = eval(seen.pop())
    assert all(len(o) == 1 for o in owners)  # one shard each
    assert {o[0] for o in owners} == {1, 2, 3}  # and 40 ids reach every shard


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("shard") / "corpus"
    official.build_corpus(root, ["onnx-simple"])
    return root


def test_shards_partition_the_selection(corpus):
    config = RunConfig(suites=["onnx-simple"], backends=[], corpus=corpus)
    everything = [c.id for c in select_cases(config, say=lambda m: None)]
    assert len(everything) == 23
    parts = [[c.id for c in select_cases(RunConfig(suites=["onnx-simple"], backends=[], corpus=corpus, shard=f"{i}/3"),
                                         say=lambda m: None)] for i in (1, 2, 3)]
    assert all(parts), [len(p) for p in parts]  # no shard is empty on 23 cases
    assert sorted(sum(parts, [])) == sorted(everything)  # exactly once each
    assert all(in_shard(cid, i + 1, 3) for i, part in enumerate(parts) for cid in part)


def test_shard_stores_merge_in_the_report(corpus, tmp_path, capsys):
    stores = tmp_path / "stores"
    for i in (1, 2):
        assert main(["run", "--suite", "onnx-simple", "--backend", "reference", "-j", "1", "--corpus", str(corpus),
                     "--shard", f"{i}/2", "--store", str(stores / f"shard-{i}.sqlite"), "--exit-zero"]) == 0
    assert main(["report", "--store", str(stores), "-o", str(tmp_path / "out"), "--format", "json"]) == 0
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    ids = [r["case_id"] for r in doc["results"]]
    assert len(ids) == 23 and len(set(ids)) == 23
    assert {r["column"] for r in doc["results"]} == {"reference"}  # one column, not one per shard
    assert {r["run"] for r in doc["results"]} == {"shard-1:run 1", "shard-2:run 1"}
