"""Fixtures of the engine tests (helpers live in engine_cases.py)."""
import pytest
from engine_cases import PROJECT_URDFS, project_case


@pytest.fixture(params=PROJECT_URDFS, ids=[p.stem for p in PROJECT_URDFS])
def project_robot(request):
    return project_case(request.param)
