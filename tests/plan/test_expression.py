"""The expression language of saved costs and constraints: values against numpy, and refusal
of everything outside the language with an ExpressionError (never another exception)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim_node.plan.expression import MAX_LENGTH, Expression, ExpressionError


def value(text, **values):
    return Expression(text, names=values)(values)


def test_arithmetic_indexing_and_functions_match_numpy():
    q = np.array([0.3, -1.2, 2.0])
    assert value("norm(q - [1, 2, 3])**2", q=q) == pytest.approx(
        float(np.sum((q - [1, 2, 3]) ** 2)), rel=1e-15)
    assert value("q[1] * 2 + q[-1] / 4 - 1", q=q) == pytest.approx(-2.4 + 0.5 - 1)
    np.testing.assert_array_equal(value("q[0:2]", q=q), q[:2])
    assert value("atan2(q[0], q[2]) + sqrt(abs(q[1]))", q=q) == pytest.approx(
        math.atan2(0.3, 2.0) + math.sqrt(1.2))
    M = np.arange(9.0).reshape(3, 3)
    np.testing.assert_array_equal(value("M @ [1, 0, 0]", M=M), M[:, 0])
    assert value("dot(cross([1, 0, 0], [0, 1, 0]), [0, 0, 1])") == 1.0
    assert value("2 * pi") == pytest.approx(2 * math.pi)
    assert value("q[0] if q[1] < 0 else q[2]", q=q) == 0.3


def test_comparisons_and_boolean_logic_for_feasibility_tests():
    q = np.array([0.3, -1.2])
    assert value("q[0] > 0 and q[1] < 0", q=q) is True
    assert value("not (q[0] > 0) or q[1] > 0", q=q) is False
    assert value("-1 < q[0] < 1", q=q) is True


def test_overflow_is_inf_not_an_error_or_a_hang():
    assert value("9**9**9**9") == math.inf                # floats, never Python's big ints
    assert value("exp(1000)") == math.inf


@pytest.mark.parametrize("text, message", [
    ("__import__('os').system('true')", "not a callable function"),
    ("q.__class__", "Attribute is not allowed"),
    ("lambda: 1", "Lambda is not allowed"),
    ("[x for x in q]", "ListComp is not allowed"),
    ("open('f')", "'open' is not a callable function"),
    ("y + 1", "unknown name 'y'"),
    ("norm(q, ord=2)", "keyword arguments are not allowed"),
    ("1 +", "syntax error at column"),
    ("True", "is not a number or a string"),
    ("1j", "is not a number or a string"),
    ("q[0] = 1", "syntax error"),
    ("(" * 300 + "1" + ")" * 300, "syntax error|nested too deeply"),
    ("-" * 5000 + "1", "nested too deeply|syntax nodes"),
    ("1+" * 1500 + "1", "syntax nodes, at most"),
    ("x" * (MAX_LENGTH + 1), "at most 10000 are accepted"),
])
def test_outside_the_language_is_refused_at_parse_time(text, message):
    with pytest.raises(ExpressionError, match=message):
        Expression(text, names=["q"])


@pytest.mark.parametrize("text, message", [
    ("q[5]", "cannot be evaluated: index 5 is out of bounds"),
    ("q[0.5]", "an index must be a whole number"),
    ("q + [1, 2]", "cannot be evaluated"),
    ("'tip' + 1", "string 'tip' used as a number"),
])
def test_evaluation_errors_name_the_expression(text, message):
    with pytest.raises(ExpressionError, match=message):
        Expression(text, names=["q"])({"q": np.zeros(3)})


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="q[]()+-*/%@.,:<>=! 0123456789eijnorsqtaxbcdlmp'_", max_size=40))
def test_any_text_parses_and_evaluates_or_raises_expression_error(text):
    try:
        expression = Expression(text, names=["q"])
        expression({"q": np.array([0.5, -0.25, 2.0])})
    except ExpressionError:
        pass
