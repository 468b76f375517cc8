"""The transactions JSON API: the same selector and service as the page. The abort is a POST
(form-encoded, CSRF-checked like every POST, admin only) and answers 400 with the form's errors."""
import dataclasses

from django.views.decorators.http import require_POST

from console.accounts.roles import ADMIN, VIEWER
from console.clusters.selectors import cluster_get
from console.errors import InvalidInput
from console.transactions import selectors, services
from console.transactions.forms import AbortForm
from console.web import json_api


@json_api(VIEWER)
def transaction_list(request, cluster_id: int):
    view = selectors.transaction_list(cluster=cluster_get(cluster_id=cluster_id))
    return {"supported": view.supported, "open_on_partitions": view.open_on_partitions, "errors": view.errors,
            "warnings": view.warnings, "producers_age": view.producers_age,
            "transactions": [_transaction(t) for t in view.transactions],
            "hanging": view.hanging}


@json_api(ADMIN)
@require_POST
def transaction_abort(request, cluster_id: int):
    form = AbortForm(request.POST)
    if not form.is_valid():
        raise InvalidInput("; ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items()))
    aborted = services.transaction_abort(cluster=cluster_get(cluster_id=cluster_id), actor=request.user,
                                         **form.cleaned_data)
    return {"aborted": aborted}


def _transaction(row) -> dict:
    """The row's description's fields and its own, side by side."""
    return {**_fields(row.description), "age_ms": row.age_ms, "hanging": row.hanging, "is_open": row.is_open}


def _fields(record) -> dict:
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
