"""On a generated corpus with every defect injected, check finds exactly the ground truth,
and detect agrees with check on every session. (The benchmark runs 5,000+ sessions.)"""

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


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Out]:
    base = tmp_path_factory.mktemp("truth")
    corpus = generate_corpus(base / "corpus", 400, 7, 0.15)
    out = Out(base / "out")
    crawl([str(corpus)], str(out.root), workers=2)
    check(str(out.root))
    return corpus, out


def test_check_finds_exactly_the_ground_truth(checked: tuple[Path, Out]) -> None:
    corpus, out = checked
    truth = load_truth(corpus)
    assert len(truth) == 400
    failing_rules = {r for t in truth.values() for g in GATES for r in t["gates"][g]["fail"]}
    assert len(failing_rules) >= 18, "every rule but BS-OPS-02 (needs git) is injected"
    problems = mismatches(truth, observed_statuses(out))
    assert problems == [], "\n".join(problems[:20])


def test_detect_agrees_with_check_on_every_session(checked: tuple[Path, Out]) -> None:
    corpus, out = checked
    found = observed_statuses(out)
    disagreements = []
    for (repo, path), gates in sorted(found.items()):
        for gate in GATES:
            detection = detect(str(corpus / repo / path), gate)
            got = by_status({o.rule: o.status for o in detection.outcomes})
            if got != by_status(gates[gate]):
                disagreements.append(
                    f"{repo}/{path} at {gate}: detect {got}, check {by_status(gates[gate])}"
                )
    assert disagreements == [], "\n".join(disagreements[:20])


def test_git_corpus_evaluates_bs_ops_02(tmp_path: Path) -> None:
    corpus = generate_corpus(tmp_path / "corpus", 60, 3, 0.3, "--git")
    out = Out(tmp_path / "out")
    crawl([str(corpus)], str(out.root), workers=1)
    check(str(out.root))
    truth = load_truth(corpus)
    assert any("BS-OPS-02" in t["gates"]["session"]["fail"] for t in truth.values())
    problems = mismatches(truth, observed_statuses(out))
    assert problems == [], "\n".join(problems[:20])
