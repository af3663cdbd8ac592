"""The core (``""``) group's strategy: defaulting and admission in ``admission``, validation in
``validation`` (``pkg/apis/core/validation``)."""
