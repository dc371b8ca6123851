"""Pairwise reviews: both orders asked, flips recorded as ties and counted as position bias."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentbench.config import ModelConfig
from agentbench.errors import StoreError
from agentbench.models import ChatClient, OpenAICompatServer, Reply
from agentbench.review import decide, pairwise_task
from tests.helpers.scripted import ScriptedServer, text
from tests.review._runs import build_run, last_user_text


def _pick(winner: str) -> Reply:
    return text(json.dumps({"winner": winner, "reason": f"{winner} looks better"}),
                usage={"prompt_tokens": 50, "completion_tokens": 5})


def _sides(request: dict[str, Any]) -> tuple[str, str]:
    prompt = last_user_text(request)
    a, b = prompt.split("## Artefact A", 1)[1].split("## Artefact B", 1)
    return a, b


async def _pairwise(run_dir: Path, base_url: str, **kw):
    config = ModelConfig(name="judge", base_url=base_url, model="scripted-model", price_input_per_m=1.0,
                         request_timeout_s=5.0, max_retries=1)
    async with ChatClient(config, backoff_s=0.01, backoff_max_s=0.02) as client:
        return await pairwise_task(run_dir, "flappy", config, client=client, **kw)


@pytest.fixture
def two(tmp_path: Path) -> Path:
    return build_run(tmp_path, models={"good": "g", "meh": "m"}, repeats=2)


async def test_position_biased_reviewer_gets_ties_and_is_counted(two: Path) -> None:
    with ScriptedServer(*[_pick("A") for _ in range(4)]) as server:  # always prefers whatever is shown first
        path, record = await _pairwise(two, server.base_url)
    assert path == two / "pairwise-flappy-judge.json"
    # The second ask of each pair really swaps the artefacts.
    first_a, first_b = _sides(server.requests[0])
    second_a, second_b = _sides(server.requests[1])
    assert "artefact of good r1" in first_a and "artefact of meh r1" in first_b
    assert "artefact of meh r1" in second_a and "artefact of good r1" in second_b
    assert "good" not in last_user_text(server.requests[0]).replace("artefact of good", "")  # names never shown
    assert [c.repeat for c in record.comparisons] == [1, 2]
    for comp in record.comparisons:
        assert comp.status == "ok" and comp.winner == "tie" and comp.position_bias and not comp.inconsistent
        assert [a.winner_raw for a in comp.asks] == ["A", "A"]
        assert [a.winner for a in comp.asks] == ["good", "meh"]
        assert [a.order for a in comp.asks] == [["good", "meh"], ["meh", "good"]]
    assert record.position_bias == 2 and record.ties == 2 and record.wins == {"good": 0, "meh": 0}
    assert record.usage.requests == 4 and record.cost_usd == pytest.approx(200 / 1e6)
    assert json.loads(path.read_text())["position_bias"] == 2


async def test_consistent_reviewer_wins_in_both_orders(two: Path) -> None:
    def prefer_good(body: dict[str, Any]) -> Reply:
        a, _ = _sides(body)
        return _pick("A" if "artefact of good" in a else "B")

    with OpenAICompatServer(prefer_good, models=["scripted-model"]) as base_url:
        _, record = await _pairwise(two, base_url)
    assert [c.winner for c in record.comparisons] == ["good", "good"]
    assert [[a.winner_raw for a in c.asks] for c in record.comparisons] == [["A", "B"], ["A", "B"]]
    assert record.wins == {"good": 2, "meh": 0} and record.position_bias == 0 and record.ties == 0


async def test_failed_ask_is_an_error_not_a_loss(two: Path) -> None:
    with ScriptedServer(_pick("A"), text("hmm"), text("still no"), _pick("A"), _pick("B")) as server:
        _, record = await _pairwise(two, server.base_url, models=["good", "meh"])
    first, second = record.comparisons
    assert first.status == "reviewer-error" and first.winner is None and not first.position_bias
    assert first.asks[1].error.kind == "invalid-answer" and first.asks[1].raw_answers == ["hmm", "still no"]
    assert second.winner == "good" and record.errors == 1 and record.wins == {"good": 1, "meh": 0}


async def test_needs_two_models_with_artefacts(tmp_path: Path) -> None:
    run_dir = build_run(tmp_path, models={"good": "g", "gone": "x"}, no_artefact=("gone",))
    refused = pytest.raises(StoreError, match=r"needs artefacts of two models.*found \['good'\]")
    with ScriptedServer() as server, refused:
        await _pairwise(run_dir, server.base_url)


@pytest.mark.parametrize(("first", "second", "expected"), [
    ("x", "x", ("x", False, False)),
    ("x", "y", ("tie", True, False)),
    ("tie", "tie", ("tie", False, False)),
    ("x", "tie", ("tie", False, True)),
    (None, "x", (None, False, False)),
])
def test_decide(first, second, expected) -> None:
    assert decide(first, second) == expected
