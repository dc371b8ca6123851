"""Second-model review: a reviewer model scores each artefact against a rubric.

``review_run`` reviews a stored run's attempts (``review-<reviewer>.json`` beside each
result.json); ``pairwise_task`` compares two models' artefacts of one task in both orders
(``<run>/pairwise-<task>-<reviewer>.json``). Rubrics and prompt templates live in ``reviewers/``.
"""

from ._pairwise import Comparison, PairwiseAsk, PairwiseRecord, decide, pairwise_file, pairwise_task
from ._prompt import (
    AnswerInvalid,
    Criterion,
    PairwiseAnswer,
    ReviewAnswer,
    Rubric,
    build_messages,
    load_rubric,
    parse_answer,
    reviewers_dir,
)
from ._review import (
    CriterionVerdict,
    ReviewError,
    ReviewOptions,
    ReviewRecord,
    ReviewRunSummary,
    ReviewUsage,
    resolve_reviewer,
    review_attempt,
    review_file,
    review_run,
    same_model,
)

__all__ = [
    "AnswerInvalid",
    "Comparison",
    "Criterion",
    "CriterionVerdict",
    "PairwiseAnswer",
    "PairwiseAsk",
    "PairwiseRecord",
    "ReviewAnswer",
    "ReviewError",
    "ReviewOptions",
    "ReviewRecord",
    "ReviewRunSummary",
    "ReviewUsage",
    "Rubric",
    "build_messages",
    "decide",
    "load_rubric",
    "pairwise_file",
    "pairwise_task",
    "parse_answer",
    "resolve_reviewer",
    "review_attempt",
    "review_file",
    "review_run",
    "reviewers_dir",
    "same_model",
]
