"""``traxla.monitoring``: event listeners as ``jax.monitoring``. Libraries record events
(``record_event``, ``record_event_duration_secs``, ``record_scalar``); listeners registered
here receive them."""
from __future__ import annotations

from typing import Any, Callable

_event_listeners: list[Callable[..., None]] = []
_event_duration_secs_listeners: list[Callable[..., None]] = []
_event_time_span_listeners: list[Callable[..., None]] = []
_scalar_listeners: list[Callable[..., None]] = []


def record_event(event: str, **kwargs: str | int) -> None:
    for callback in _event_listeners:
        callback(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: str | int) -> None:
    for callback in _event_duration_secs_listeners:
        callback(event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float,
                           **kwargs: str | int) -> None:
    for callback in _event_time_span_listeners:
        callback(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: Any) -> None:
    for callback in _scalar_listeners:
        callback(event, value, **kwargs)


def register_event_listener(callback) -> None:
    _event_listeners.append(callback)


def register_event_duration_secs_listener(callback) -> None:
    _event_duration_secs_listeners.append(callback)


def register_event_time_span_listener(callback) -> None:
    _event_time_span_listeners.append(callback)


def register_scalar_listener(callback) -> None:
    _scalar_listeners.append(callback)


def _unregister(listeners, callback, what):
    try:
        listeners.remove(callback)
    except ValueError:
        raise AssertionError(f"{what} listener {callback} was not registered") from None


def unregister_event_listener(callback) -> None:
    _unregister(_event_listeners, callback, "event")


def unregister_event_duration_listener(callback) -> None:
    _unregister(_event_duration_secs_listeners, callback, "event duration")


def unregister_event_time_span_listener(callback) -> None:
    _unregister(_event_time_span_listeners, callback, "event time span")


def unregister_scalar_listener(callback) -> None:
    _unregister(_scalar_listeners, callback, "scalar")


def clear_event_listeners() -> None:
    for listeners in (_event_listeners, _event_duration_secs_listeners,
                      _event_time_span_listeners, _scalar_listeners):
        listeners.clear()


def get_event_listeners():
    return list(_event_listeners)


def get_event_duration_listeners():
    return list(_event_duration_secs_listeners)


__all__ = ["record_event", "record_event_duration_secs", "record_event_time_span",
           "record_scalar", "register_event_listener", "register_event_duration_secs_listener",
           "register_event_time_span_listener", "register_scalar_listener",
           "unregister_event_listener", "unregister_event_duration_listener",
           "unregister_event_time_span_listener", "unregister_scalar_listener",
           "clear_event_listeners"]
