"""inference_mode(mode) honours its flag as context manager and decorator; managers decorate
bare and called, and generator functions (checked against torch 2.13)."""
from mindnlp import core


def flags():
    return core.is_grad_enabled(), core.is_inference_mode_enabled()


def test_inference_mode_flags_as_context_manager():
    assert flags() == (True, False)
    with core.inference_mode():
        assert flags() == (False, True)
        with core.inference_mode(False):
            assert flags() == (True, False)
        assert flags() == (False, True)
    with core.no_grad():
        with core.inference_mode(False):              # turns recording back on, as torch's does
            assert flags() == (True, False)
        assert flags() == (False, False)
    assert flags() == (True, False)


def test_inference_mode_as_decorator_keeps_its_flag():
    @core.inference_mode
    def bare():
        return flags()

    @core.inference_mode()
    def called():
        return flags()

    @core.inference_mode(False)
    def off():
        return flags()

    assert bare() == (False, True) and called() == (False, True) and off() == (True, False)
    with core.no_grad():
        assert off() == (True, False)
    x = core.ones(1, requires_grad=True)
    assert core.inference_mode(False)(lambda t: t * 2)(x).requires_grad
    assert flags() == (True, False)


def test_bare_decorators_and_reused_managers():
    @core.no_grad
    def no():
        return core.is_grad_enabled()

    @core.enable_grad
    def yes():
        return core.is_grad_enabled()

    assert no() is False
    with core.no_grad():
        assert yes() is True
    manager = core.inference_mode()
    with manager:
        with manager:
            assert flags() == (False, True)
        assert flags() == (False, True)
    assert flags() == (True, False)


def test_decorated_generators_run_each_step_in_the_context():
    @core.no_grad()
    def steps():
        received = yield core.is_grad_enabled()
        yield received, core.is_grad_enabled()

    gen = steps()
    assert next(gen) is False
    assert core.is_grad_enabled()
    assert gen.send("hi") == ("hi", False)

    @core.inference_mode(False)
    def enabled_steps():
        for _ in range(2):
            yield flags()

    with core.no_grad():
        assert list(enabled_steps()) == [(True, False), (True, False)]


def test_set_grad_enabled_decorator_and_call():
    @core.set_grad_enabled(False)
    def off():
        return core.is_grad_enabled()

    assert core.is_grad_enabled() and off() is False and core.is_grad_enabled()
    core.set_grad_enabled(False)
    try:
        assert not core.is_grad_enabled()
    finally:
        core.set_grad_enabled(True)
