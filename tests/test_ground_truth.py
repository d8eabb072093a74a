"""On a generated corpus with every defect injected, check finds exactly the ground truth,
and detect agrees with check on every session. (The benchmark runs 5,000+ sessions.)

The corpora are written with census.md §3.1 variants (Markdown as people and models write
it): 30% of the places that allow one in the main corpus, every such place in a smaller
variant-heavy one, with the forms §3.1 names as broken among the defects.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.check import check
from pipeline.crawl import crawl
from pipeline.detect import detect
from pipeline.store import Out
from pipeline.truth import by_status, load_truth, mismatches, observed_statuses
from pipeline.vocabulary import GATES
from tests.conftest import generate_corpus


def crawl_and_check(corpus: Path, out_dir: Path, workers: int = 2) -> Out:
    out = Out(out_dir)
    crawl([str(corpus)], str(out.root), workers=workers)
    check(str(out.root))
    return out


def detect_disagreements(corpus: Path, out: Out) -> list[str]:
    disagreements = []
    for (repo, path), gates in sorted(observed_statuses(out).items()):
        for gate in GATES:
            detection = detect(str(corpus / repo / path), gate)
            got = by_status({o.rule: o.status for o in detection.outcomes})
            if got != by_status(gates[gate]):
                disagreements.append(
                    f"{repo}/{path} at {gate}: detect {got}, check {by_status(gates[gate])}"
                )
    return disagreements


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Out]:
    base = tmp_path_factory.mktemp("truth")
    corpus = generate_corpus(base / "corpus", 400, 7, 0.15, "--variants", "0.3")
    return corpus, crawl_and_check(corpus, base / "out")


@pytest.fixture(scope="module")
def variant_heavy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Out]:
    base = tmp_path_factory.mktemp("variants")
    corpus = generate_corpus(base / "corpus", 120, 12, 0.15, "--variants", "1")
    return corpus, crawl_and_check(corpus, base / "out")


def test_check_finds_exactly_the_ground_truth(checked: tuple[Path, Out]) -> None:
    corpus, out = checked
    truth = load_truth(corpus)
    assert len(truth) == 400
    failing_rules = {r for t in truth.values() for g in GATES for r in t["gates"][g]["fail"]}
    assert len(failing_rules) >= 18, "every rule but BS-OPS-02 (needs git) is injected"
    problems = mismatches(truth, observed_statuses(out))
    assert problems == [], "\n".join(problems[:20])


def test_detect_agrees_with_check_on_every_session(checked: tuple[Path, Out]) -> None:
    disagreements = detect_disagreements(*checked)
    assert disagreements == [], "\n".join(disagreements[:20])


def test_check_finds_the_ground_truth_when_every_spot_is_a_variant(
    variant_heavy: tuple[Path, Out],
) -> None:
    corpus, out = variant_heavy
    truth = load_truth(corpus)
    assert len(truth) == 120
    problems = mismatches(truth, observed_statuses(out))
    assert problems == [], "\n".join(problems[:20])


def test_detect_agrees_with_check_when_every_spot_is_a_variant(
    variant_heavy: tuple[Path, Out],
) -> None:
    disagreements = detect_disagreements(*variant_heavy)
    assert disagreements == [], "\n".join(disagreements[:20])


def test_git_corpus_evaluates_bs_ops_02(tmp_path: Path) -> None:
    corpus = generate_corpus(tmp_path / "corpus", 60, 3, 0.3, "--git")
    out = crawl_and_check(corpus, tmp_path / "out", workers=1)
    truth = load_truth(corpus)
    assert any("BS-OPS-02" in t["gates"]["session"]["fail"] for t in truth.values())
    problems = mismatches(truth, observed_statuses(out))
    assert problems == [], "\n".join(problems[:20])
