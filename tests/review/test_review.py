"""review_run against a scripted reviewer on a real loopback OpenAI-compatible server."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from agentbench.config import ModelConfig
from agentbench.errors import ConfigError
from agentbench.models import ChatClient, Reply
from agentbench.review import ReviewOptions, ReviewRecord, resolve_reviewer, review_file, review_run
from tests.helpers.scripted import ScriptedServer, text
from tests.review._runs import FLAPPY_IDS, answer, build_run, last_user_text

USAGE = {"prompt_tokens": 1000, "completion_tokens": 200}


def _client(server: ScriptedServer, **cfg) -> tuple[ModelConfig, ChatClient]:
    config = server.config(name="judge", price_input_per_m=2.0, price_output_per_m=10.0, **cfg)
    return config, ChatClient(config, backoff_s=0.01, backoff_max_s=0.02)


async def _review(run_dir: Path, server: ScriptedServer, *, blind: bool = False, options: ReviewOptions | None = None,
                  **cfg):
    config, client = _client(server, **cfg)
    async with client:
        return await review_run(run_dir, config, blind=blind, options=options, client=client)


def _stored(run_dir: Path, model: str = "alpha", name: str = "review-judge.json") -> dict:
    return json.loads((run_dir / "flappy" / model / "r1" / name).read_text())


async def test_good_json_is_stored_with_usage_cost_and_checklist(run_dir: Path) -> None:
    result_before = (run_dir / "flappy" / "alpha" / "r1" / "result.json").read_bytes()
    met = {"pipes-vary": False, "same-speed-any-monitor": False, "restart-not-skipped": True}
    with ScriptedServer(text(answer(met, score=4), usage=USAGE)) as server:
        summary = await _review(run_dir, server)
    (path, record), = summary.reviews
    assert path == run_dir / "flappy" / "alpha" / "r1" / "review-judge.json"
    data = _stored(run_dir)
    assert ReviewRecord.model_validate(data) == record
    assert data["status"] == "ok" and data["error"] is None and data["raw_answers"] == []
    assert data["reviewer"] == "judge" and data["model_of_artefact"] == "alpha" and data["blind"] is False
    assert [c["id"] for c in data["criteria"]] == FLAPPY_IDS
    assert {c["id"]: c["met"] for c in data["criteria"]}["pipes-vary"] is False
    assert data["criteria"][0]["reason"] == "because core-loop"
    assert data["score"] == 4 and data["verdict"] == "Plays, but too fast at 240 Hz."
    assert data["passed"] is False  # required criteria 'pipes-vary' and 'same-speed-any-monitor' not met
    assert data["weighted_score"] == round(10 * (12 - 1 - 3) / 12, 2)
    assert data["usage"] == {"requests": 1, "prompt_tokens": 1000, "completion_tokens": 200, "reasoning_tokens": 0}
    assert data["cost_usd"] == pytest.approx((1000 * 2.0 + 200 * 10.0) / 1e6)
    assert data["wall_s"] > 0 and data["same_model_warning"] is False
    # The review decides the checklist's reviewer items; result.json itself is never rewritten.
    items = {i["id"]: i for i in data["checklist"]}
    assert items["pipes-vary"]["status"] == "fail" and items["pipes-vary"]["decided_by"] == "reviewer"
    assert items["restart-not-skipped"]["status"] == "pass" and items["restart-not-skipped"]["decided_by"] == "reviewer"
    assert items["score"]["status"] == "unknown"  # decided by the `score` check: the reviewer never touches it
    assert items["same-on-any-monitor"]["status"] == "fail"  # still the probe's verdict, not the reviewer's
    assert "pipes-vary" in data["checklist_summary"]["required_failed"]
    assert (run_dir / "flappy" / "alpha" / "r1" / "result.json").read_bytes() == result_before
    # What was asked: the source, the probe results, no images for a text-only reviewer.
    (request,) = server.requests
    prompt = request["messages"][0]["content"]
    assert isinstance(prompt, str)
    assert "// artefact of alpha r1" in prompt and "`refresh-rate`: fail" in prompt
    assert "alpha" not in prompt.replace("artefact of alpha r1", "")  # the model's name is never shown


async def test_invalid_json_then_good_reasks_once_with_the_error(run_dir: Path) -> None:
    with ScriptedServer(text("Looks fine to me, 7/10.", usage=USAGE),
                        text(answer(fenced=True), usage=USAGE)) as server:
        summary = await _review(run_dir, server)
    record = summary.reviews[0][1]
    assert record.status == "ok" and record.reasks == 1 and record.passed is True and record.score == 6
    assert record.usage.requests == 2 and record.usage.prompt_tokens == 2000
    second = server.requests[1]["messages"]
    assert second[1] == {"role": "assistant", "content": "Looks fine to me, 7/10."}
    assert "no JSON object found" in last_user_text(server.requests[1])


async def test_invalid_twice_is_a_reviewer_error_with_the_raw_answers(run_dir: Path) -> None:
    bad = answer(ids=FLAPPY_IDS[:3])
    with ScriptedServer(text("no idea", usage=USAGE), text(bad, usage=USAGE)) as server:
        summary = await _review(run_dir, server)  # a third request would fail the server's exit check
    data = _stored(run_dir)
    assert data["status"] == "reviewer-error" and data["error"]["kind"] == "invalid-answer"
    assert "missing criteria" in data["error"]["message"] and "fair-to-play" in data["error"]["message"]
    assert data["raw_answers"] == ["no idea", bad]
    assert data["score"] is None and data["passed"] is None and data["verdict"] is None and data["criteria"] == []
    assert data["checklist"] == [] and data["usage"]["requests"] == 2
    assert "no JSON object found" in last_user_text(server.requests[1])  # the first answer's problem
    assert summary.errors == [summary.reviews[0][1]]


async def test_more_reasks_when_configured(run_dir: Path) -> None:
    with ScriptedServer(text("x"), text("y"), text(answer())) as server:
        summary = await _review(run_dir, server, options=ReviewOptions(max_reasks=2))
    assert summary.reviews[0][1].status == "ok" and summary.reviews[0][1].reasks == 2


async def test_503_after_retries_is_an_infra_reviewer_error(run_dir: Path) -> None:
    with ScriptedServer(Reply(status=503), Reply(status=503)) as server:
        summary = await _review(run_dir, server, max_retries=1)
    assert len(server.requests) == 2
    data = _stored(run_dir)
    assert data["status"] == "reviewer-error" and data["score"] is None and data["passed"] is None
    assert data["error"]["kind"] == "infra" and data["error"]["status"] == 503
    assert "503" in data["error"]["message"] and data["usage"]["requests"] == 0
    assert summary.errors


async def test_vision_reviewer_gets_the_60_and_240_hz_filmstrips_as_images(run_dir: Path) -> None:
    adir = run_dir / "flappy" / "alpha" / "r1"
    with ScriptedServer(text(answer())) as server:
        await _review(run_dir, server, vision=True, options=ReviewOptions(max_images=2))
    parts = server.requests[0]["messages"][0]["content"]
    assert parts[0]["type"] == "text" and "2 image(s) follow" in parts[0]["text"]
    urls = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
    sent = [base64.b64decode(u.removeprefix("data:image/png;base64,")) for u in urls]
    assert sent == [(adir / "evidence" / n).read_bytes() for n in ("refresh-rate-60hz.png", "refresh-rate-240hz.png")]
    assert "60 Hz run" in parts[1]["text"] and "240 Hz run" in parts[3]["text"]
    assert _stored(run_dir)["images"] == ["evidence/refresh-rate-60hz.png", "evidence/refresh-rate-240hz.png"]


async def test_blind_review_withholds_probe_results_and_has_its_own_file(run_dir: Path) -> None:
    with ScriptedServer(text(answer()), text(answer(score=9))) as server:
        await _review(run_dir, server)
        await _review(run_dir, server, blind=True)
    assert "Probe results" in server.requests[0]["messages"][0]["content"]
    blind_prompt = server.requests[1]["messages"][0]["content"]
    assert "Probe results" not in blind_prompt and "speed factor" not in blind_prompt
    assert _stored(run_dir)["score"] == 6
    assert _stored(run_dir, name="review-judge-blind.json")["blind"] is True
    assert _stored(run_dir, name="review-judge-blind.json")["score"] == 9


async def test_skips_attempts_without_artefact_and_already_reviewed(tmp_path: Path) -> None:
    run_dir = build_run(tmp_path, models={"alpha": "a", "beta": "b"}, no_artefact=("beta",))
    with ScriptedServer(text("bad"), text("bad"), text(answer())) as server:
        first = await _review(run_dir, server)
        assert first.skipped == ["flappy/beta/r1: outcome no-artefact"]
        assert first.reviews[0][1].status == "reviewer-error"
        retry = await _review(run_dir, server, options=ReviewOptions(missing_only=True))  # errors are retried
        assert retry.reviews[0][1].status == "ok"
        again = await _review(run_dir, server, options=ReviewOptions(missing_only=True))
    assert again.reviews == [] and "flappy/alpha/r1: already reviewed" in again.skipped


async def test_same_model_is_flagged(tmp_path: Path) -> None:
    run_dir = build_run(tmp_path, models={"alpha": "scripted-model", "beta": "other"})
    with ScriptedServer(text(answer()), text(answer())) as server:  # the scripted reviewer serves scripted-model
        summary = await _review(run_dir, server)
    flags = {r.model_of_artefact: r.same_model_warning for _, r in summary.reviews}
    assert flags == {"alpha": True, "beta": False}


async def test_demo_models_cannot_review(run_dir: Path) -> None:
    from agentbench.config import DEMO_MODELS

    with pytest.raises(ConfigError, match="demo models cannot review; configure a model in models.toml"):
        await review_run(run_dir, DEMO_MODELS["demo"])
    with pytest.raises(ConfigError, match="demo models cannot review"):
        resolve_reviewer("demo-careful")
    assert not list(run_dir.rglob("review-*.json"))


def test_unknown_reviewer_and_missing_key_are_config_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    models = {"judge": ModelConfig(name="judge", base_url="http://127.0.0.1:9/v1", model="m",
                                   api_key_env="JUDGE_KEY_FOR_TEST")}
    monkeypatch.delenv("JUDGE_KEY_FOR_TEST", raising=False)
    with pytest.raises(ConfigError, match="Unknown model 'nobody'"):
        resolve_reviewer("nobody", models)
    with pytest.raises(ConfigError, match="set the environment variable JUDGE_KEY_FOR_TEST"):
        resolve_reviewer("judge", models)
    monkeypatch.setenv("JUDGE_KEY_FOR_TEST", "k")
    assert resolve_reviewer("judge", models).name == "judge"


def test_review_file_names_are_safe(tmp_path: Path) -> None:
    assert review_file(tmp_path, "org/model:v1").name == "review-org_model_v1.json"
    assert review_file(tmp_path, "judge", blind=True).name == "review-judge-blind.json"


async def test_report_reads_reviews_as_pass_fail_and_errors_as_undecided(tmp_path: Path) -> None:
    from agentbench.report import load_runs, write_report
    from agentbench.report._verdicts import scorer_verdicts

    run_dir = build_run(tmp_path, models={"alpha": "a", "beta": "b", "gamma": "c"})
    with ScriptedServer(text(answer()), text(answer({"score-per-pipe": False})), text("x"), text("y")) as server:
        await _review(run_dir, server)
    (run,) = load_runs([run_dir])
    says = {a.model: scorer_verdicts(a)["reviewer:judge"][0] for a in run.attempts}
    assert says == {"alpha": "pass", "beta": "fail", "gamma": None}  # a reviewer error is never a fail
    assert "reviewer judge" in write_report([run_dir]).read_text()


async def test_unknown_task_or_model_filter_is_an_error(run_dir: Path) -> None:
    from agentbench.errors import StoreError

    with ScriptedServer() as server:
        config, client = _client(server)
        async with client:
            with pytest.raises(StoreError, match=r"has no task \['todo'\]; it has flappy"):
                await review_run(run_dir, config, tasks=["todo"], client=client)
            with pytest.raises(StoreError, match=r"has no model \['zeta'\]; it has alpha"):
                await review_run(run_dir, config, models=["zeta"], client=client)
