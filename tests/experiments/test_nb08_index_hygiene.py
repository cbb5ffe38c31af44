"""Notebook 08's day of an index, on two small documents and a stand-in encoder: every step
recorded, the status views laid out in tables that fit, the claims judged on the record."""

from __future__ import annotations

import pytest
from fakes import HashEncoder

from rag_lab.claims.verdicts import Verdict
from rag_lab.documents import Document
from rag_lab.experiments import nb08_index_hygiene as nb08

TEXTS = {
    "01-tensors": "# Tensors\n\nA tensor holds numbers along axes.\n",
    "05-autograd": "# Autograd\n\nGradients accumulate in x.grad every time backward runs.\n",
}
V2 = "chunk=E/512/64;embed=minilm;v2"


@pytest.fixture(scope="module")
def hygiene(tmp_path_factory):
    src = tmp_path_factory.mktemp("corpus")
    docs = []
    for doc_id, text in TEXTS.items():
        path = src / f"{doc_id}.md"
        path.write_text(text, encoding="utf-8")
        docs.append(Document(doc_id, doc_id, text, path=path))
    return nb08.run(
        docs,
        HashEncoder(),
        question="why does x.grad keep growing every time I call backward?",
        cutoff=0.99,
        upgraded_pipeline=V2,
        edited_document="05-autograd.md",
    )


def test_every_step_is_recorded_as_it_stood(hygiene):
    reports, statuses = hygiene.reports, hygiene.statuses
    assert list(reports) == list(statuses) == ["first run", "upgrade", "rebuild", "retry"]
    assert sorted(reports["first run"].failed) == ["21-wiki-export", "22-placeholder"]
    assert hygiene.counts_agree
    assert statuses["first run"].chunks == 2
    assert len(hygiene.answers["first run"].citations) == 2  # both chunks within 0.99
    # The upgrade re-embeds the edited document only; both pipelines are then refused.
    assert reports["upgrade"].indexed == ["05-autograd"]
    assert reports["upgrade"].stale == ["01-tensors"]
    assert statuses["upgrade"].counts == {"indexed": 1, "failed": 2, "stale": 1}
    assert list(hygiene.refusals) == [V2, "chunk=E/512/64;embed=minilm;v1"]
    assert all("<folder>" in m and "/tmp" not in m for m in hygiene.refusals.values())
    assert statuses["rebuild"].chunks == 2  # the edit fits its document's one chunk
    assert reports["retry"].indexed == ["21-wiki-export"]
    assert list(reports["retry"].failed) == ["22-placeholder"]
    assert statuses["retry"].counts == {"indexed": 3, "failed": 1, "stale": 0}
    assert statuses["retry"].chunks == 3  # the fixed export is searchable now
    assert all(st.folder == nb08.FOLDER for st in statuses.values())


def test_the_claims_are_judged_on_the_record(hygiene):
    part = {e.claim: e for e in nb08.entries(hygiene)}
    assert list(part) == list(nb08.HEADLINE[:3])
    assert {e.verdict for e in part.values()} == {Verdict.BY_CONSTRUCTION}
    assert part["failed-visible"].here == "2 failed, each with its reason"
    assert part["counts-recorded"].here == "equal"
    assert part["stale-refused"].here == "2 refused"


# --- the half-migrated index --------------------------------------------------------------------


def half_migrated():
    """16 questions asked twice; the first 8 have their needle (chunk 0, current) in the stale
    half, and in the half-migrated index chunk 0 falls behind the six stale chunks."""
    import numpy as np

    from rag_lab.evaluation.migration import Migration

    n, chunks = 32, 7
    current = np.tile([0.2] + [0.5] * (chunks - 1), (n, 1))
    mixed = current.copy()
    mixed[:16, 0] = 0.95
    negatives = np.full((3, chunks), 0.9)
    negatives[0, 0] = 0.3  # one negative within the cutoff of the whole index only
    mixed_negatives = negatives.copy()
    mixed_negatives[0, 0] = 0.95
    return Migration(
        frozenset({"old"}),
        np.array([False] + [True] * (chunks - 1)),
        np.array([True] * 16 + [False] * 16),
        [f"q{i // 2}" for i in range(n)],
        [{0}] * n,
        (current, negatives),
        (mixed, mixed_negatives),
        cutoff=0.6,
    )


def stamp_check(refused=frozenset({"old"}), refusal="refusing to search: …"):
    return nb08.StampCheck(2, refusal, refused)


def test_the_bluffs_table_counts_each_index():
    m = half_migrated()
    bluffs = nb08.bluffs_table(m).frame
    assert bluffs.loc["stale half: answered", ["current", "half-migrated"]].tolist() == [16, 16]
    assert bluffs.loc["… needle not in top 5", ["current", "half-migrated"]].tolist() == [0, 16]
    assert bluffs.loc["nearest chunk is stale"].tolist() == ["–", 16, 32]
    assert bluffs.loc["… for the stale half's queries"].tolist() == ["–", 16, 16]
    assert bluffs.loc["negatives answered", ["current", "half-migrated"]].tolist() == [1, 0]


def test_the_distances_table_gives_each_distribution_in_numbers():
    m = half_migrated()
    table = nb08.distances_table(m)
    frame = table.frame
    # Here the stale chunks (0.5) are nearer than the needle's (0.95): found, and first.
    stale = frame.loc["stale chunks (older pipeline)"]
    assert stale.tolist() == [32, 0.5, 32]
    current = frame.loc["current chunks"]
    assert current["median distance"] == pytest.approx(0.575)  # 0.2 or 0.95, half each
    assert current["within the cutoff"] == 16
    assert frame.loc["negatives, whole index"].tolist() == [3, 0.9, 1]
    assert table.width <= 100


def test_the_migration_claims_are_judged_on_the_record():
    m = half_migrated()
    part = nb08.migration_entries(m, stamp_check())
    assert [e.claim for e in part] == [
        "migration-loses-stale@R5",
        "migration-current-half@R5",
        "migration-confident-nonsense",
        "migration-refused",
    ]
    lost, fresh, nonsense, refused = part
    assert lost.verdict is Verdict.REPRODUCES and lost.estimate == pytest.approx(1.0)
    # A difference of exactly zero on every question: no variation, no evidence either way.
    assert fresh.verdict is Verdict.NO_VARIATION
    assert fresh.estimate == pytest.approx(0.0)
    assert nonsense.here == "16 vs 0 of 16 queries"
    assert refused.verdict is Verdict.REPRODUCES
    wrong = nb08.migration_entries(m, stamp_check(refused=frozenset({"new"})))[3]
    assert wrong.verdict is Verdict.CONTRADICTED
    went_ahead = stamp_check(refused=frozenset(), refusal=None)
    assert nb08.migration_entries(m, went_ahead)[3].verdict is Verdict.CONTRADICTED


# --- the same half-migrated index, stored with its stamps ---------------------------------------


def corpus(folder, names=("01-tensors", "02-pandas", "03-algebra", "04-calculus")):
    out = []
    for doc_id in names:
        path = folder / f"{doc_id}.md"
        path.write_text(f"# {doc_id}\n\nA sentence about {doc_id[3:]}.\n", encoding="utf-8")
        out.append(Document(doc_id, doc_id, path.read_text(encoding="utf-8"), path=path))
    return out


def test_the_half_built_index_is_refused_by_name(tmp_path):
    stale = frozenset({"02-pandas", "04-calculus"})
    old, current = HashEncoder("test/old-pipeline"), HashEncoder()
    check = nb08.stamped_index(corpus(tmp_path), stale, old, current, tmp_path / "index")
    assert check.documents == 4 and check.refused == stale
    assert "2 of 4 documents are stale" in check.refusal
    assert (
        "rag-lab index <folder> --rebuild" in check.refusal and str(tmp_path) not in check.refusal
    )


def test_one_pipeline_throughout_is_searched(tmp_path):
    same = HashEncoder()
    check = nb08.stamped_index(
        corpus(tmp_path), frozenset({"02-pandas"}), same, same, tmp_path / "i"
    )
    assert check.refusal is None and check.refused == frozenset()
