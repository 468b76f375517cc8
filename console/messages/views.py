"""Message pages: browse, one record (and its raw bytes), search, tail, produce, export and the
topic's message settings. Views validate, call one selector or service, and render; records
are escaped by the templates, and the search and tail pages draw them with textContent."""
from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.views.decorators.http import require_POST

from console.accounts.roles import ADMIN, OPERATOR, VIEWER, has_role
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError, InvalidInput
from console.messages import selectors, services
from console.messages.export import EXPORT_FORMATS, export_lines
from console.messages.filters import FIELDS, JSON_OPS
from console.messages.forms import (
    MaskingRuleForm,
    MessageSettingsForm,
    ProduceForm,
    SchemaForm,
    browse_query_from,
    format_cursor,
    format_query,
    formats_from,
    order_from,
    search_query_from,
)
from console.messages.masking import masked_for
from console.messages.models import FORMATS
from console.schema_registry.services import subject_usage_record
from console.messages.presenting import Withheld
from console.web import page, refused


def _common(request, cluster, name: str) -> dict:
    masked = masked_for(request.user)
    return {"cluster": cluster, "topic": name, "formats": FORMATS,
            "chosen": selectors.message_settings_get(cluster=cluster, topic=name), "masked": masked,
            "masks_apply": masked and bool(selectors.masking_rules(cluster=cluster, topic=name)),
            "params": request.GET}


@page(VIEWER)
def message_browse(request, cluster_id: int, name: str):
    cluster = cluster_get(cluster_id=cluster_id)
    context = _common(request, cluster, name)
    try:
        query = browse_query_from(request.GET)
        order = order_from(request.GET, start=query.start)
        result = selectors.message_browse(cluster=cluster, topic=name, query=query, mask=context["masked"],
                                          formats=formats_from(request.GET))
    except InvalidInput as exc:
        return render(request, "messages/browse.html", {**context, "error": str(exc), "params": request.GET},
                      status=400)
    params = request.GET.copy()
    params.pop("cursor", None)
    params.pop("dir", None)
    params["order"] = order
    switched = params.copy()
    switched["order"] = "oldest_first" if order == "newest_first" else "newest_first"
    cursor = request.GET.get("cursor")
    if cursor:        # the same page, listed the other way
        switched.update({"cursor": cursor, "dir": request.GET.get("dir", "next")})
    rows = result.messages[::-1] if order == "newest_first" else result.messages
    subjects = {m.value.subject for m in result.messages if m.value.subject} | \
        {m.key.subject for m in result.messages if m.key.subject}
    if subjects:   # for the Schemas page: RecordNameStrategy subjects are not named after their topics
        subject_usage_record(cluster=cluster, topic=name, subjects=subjects)
    return render(request, "messages/browse.html", {
        **context, "result": result, "rows": rows, "order": order, "query": query, "params": request.GET,
        "base_query": params.urlencode(), "switch_query": switched.urlencode(),
        "detail_query": format_query(request.GET), "whole_topic": _whole_topic(result, query),
        "next_cursor": format_cursor(result.next_cursor), "prev_cursor": format_cursor(result.prev_cursor)})


def _whole_topic(result, query) -> str:
    """What "Export" exports, said plainly: every record, not the page on screen."""
    records = sum(end - start for start, end in result.offsets.values())
    if query.partition is not None:
        where = f"partition {query.partition}"
    elif len(result.partitions) == 1:
        where = "its one partition"
    else:
        where = f"all {len(result.partitions):,} partitions"
    return f"every record of {where} (about {records:,} record{pluralize(records)}), not only this page"


@page(VIEWER)
def message_detail(request, cluster_id: int, name: str, partition: int, offset: int):
    """One record, with links to its partition's records before and after it (the page's decoders kept)."""
    cluster = cluster_get(cluster_id=cluster_id)
    found = selectors.message_detail(cluster=cluster, topic=name, partition=partition, offset=offset,
                                     mask=masked_for(request.user), formats=formats_from(request.GET))
    view = found.view
    return render(request, "messages/detail.html", {
        **_common(request, cluster, name), "message": view, "found": found,
        "record": {**view.as_dict(), "topic": name}, "detail_query": format_query(request.GET)})


@page(VIEWER)
def message_raw(request, cluster_id: int, name: str, partition: int, offset: int):
    """The value's bytes as a download; for a masked reader, the masked text (or a page saying
    why the value is withheld)."""
    cluster = cluster_get(cluster_id=cluster_id)
    record, _view, presenter = selectors.message_get(cluster=cluster, topic=name, partition=partition,
                                                     offset=offset, mask=masked_for(request.user),
                                                     formats=formats_from(request.GET))
    try:
        data, suffix = presenter.raw_value(record)
    except Withheld as exc:
        return refused(request, str(exc), needs_role=OPERATOR)
    response = HttpResponse(data, content_type="application/octet-stream")
    response["Content-Disposition"] = f'attachment; filename="{name}-{partition}-{offset}.{suffix}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


@page(VIEWER)
def message_search(request, cluster_id: int, name: str):
    cluster = cluster_get(cluster_id=cluster_id)
    return render(request, "messages/search.html", {**_common(request, cluster, name), "fields": FIELDS,
                                                    "json_ops": JSON_OPS, "params": request.GET})


@page(VIEWER)
def message_tail(request, cluster_id: int, name: str):
    cluster = cluster_get(cluster_id=cluster_id)
    return render(request, "messages/tail.html", {**_common(request, cluster, name), "fields": FIELDS,
                                                  "json_ops": JSON_OPS})


@page(VIEWER)
def message_export(request, cluster_id: int, name: str):
    """?format=jsonl|csv and the search fields (none: every record in the range)."""
    cluster = cluster_get(cluster_id=cluster_id)
    fmt = request.GET.get("format", "jsonl")
    if fmt not in EXPORT_FORMATS:
        return render(request, "error.html", {"heading": "Cannot export that", "status": 400,
                                              "message": f"Export as one of {', '.join(EXPORT_FORMATS)}."},
                      status=400)
    data = request.GET.copy()
    data.setdefault("max_matches", "100000000")
    data.setdefault("max_seconds", "600")
    try:
        query, formats = search_query_from(data)
        events = selectors.message_search(cluster=cluster, topic=name, query=query,
                                          mask=masked_for(request.user), formats=formats)
        next(events)   # the notes; it compiles the filter and opens the reader, so bad input fails here
    except InvalidInput as exc:
        return render(request, "error.html", {"heading": "Cannot export that", "status": 400,
                                              "message": str(exc)}, status=400)
    response = StreamingHttpResponse(export_lines(events, fmt=fmt),
                                     content_type="text/csv" if fmt == "csv" else "application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response


@page(OPERATOR)
def message_produce(request, cluster_id: int, name: str):
    cluster = cluster_get(cluster_id=cluster_id)
    form = ProduceForm(request.POST or None)
    produced = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            produced = services.message_produce(
                cluster=cluster, actor=request.user, topic=name,
                key=None if data["key_null"] else data["key"], value=None if data["value_null"] else data["value"],
                headers=data["headers"], partition=data["partition"], key_serializer=data["key_serializer"],
                value_serializer=data["value_serializer"], schema_id=data["schema_id"], copies=data["copies"],
                subject=data["subject"], schema_version=data["schema_version"], message_type=data["message_type"])
        except ConsoleError as exc:
            form.add_error(None, str(exc))
    # The form keeps what was sent (a bound form), so the next record is one edit away.
    return render(request, "messages/produce.html", {**_common(request, cluster, name), "form": form,
                                                     "produced": produced, "schemas": selectors.registered_schemas()},
                  status=400 if form.errors else 200)


@page(VIEWER)
def message_settings(request, cluster_id: int, name: str):
    cluster = cluster_get(cluster_id=cluster_id)
    row = selectors.message_settings_get(cluster=cluster, topic=name)
    form = MessageSettingsForm(request.POST or None, request.FILES or None, initial={
        "key_format": row.key_format, "value_format": row.value_format, "header_format": row.header_format,
        "avro_schema": row.avro_schema, "avro_key_schema": row.avro_key_schema,
        "protobuf_message_type": row.protobuf_message_type})
    if request.method == "POST":
        if not has_role(request.user, OPERATOR):
            return refused(request, "Changing deserializers needs the operator role.", needs_role=OPERATOR)
        if form.is_valid():
            data = form.cleaned_data
            upload = data.get("protobuf_descriptor_set")
            try:
                services.message_settings_update(
                    cluster=cluster, actor=request.user, topic=name, key_format=data["key_format"],
                    value_format=data["value_format"], header_format=data["header_format"],
                    avro_schema=data["avro_schema"], avro_key_schema=data["avro_key_schema"],
                    protobuf_descriptor_set=upload.read() if upload else None,
                    protobuf_message_type=data["protobuf_message_type"])
            except ConsoleError as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(request, "Message settings saved.")
                return redirect("messages:settings", cluster_id=cluster.pk, name=name)
    return render(request, "messages/settings.html", {
        **_common(request, cluster, name), "form": form, "rule_form": MaskingRuleForm(),
        "rules": selectors.masking_rules(cluster=cluster, topic=name),
        "can_mask": has_role(request.user, ADMIN)}, status=400 if form.errors else 200)


@page(ADMIN)
@require_POST
def masking_rule_add(request, cluster_id: int, name: str):
    cluster = cluster_get(cluster_id=cluster_id)
    form = MaskingRuleForm(request.POST)
    try:
        if not form.is_valid():
            raise InvalidInput(" ".join(e for errors in form.errors.values() for e in errors))
        services.masking_rule_add(cluster=cluster, actor=request.user, topic=name, **form.cleaned_data)
    except ConsoleError as exc:
        messages.error(request, f"Masking rule not added: {exc}")
    else:
        messages.success(request, "Masking rule added.")
    return redirect("messages:settings", cluster_id=cluster.pk, name=name)


@page(ADMIN)
@require_POST
def masking_rule_delete(request, cluster_id: int, name: str, rule_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    try:
        services.masking_rule_delete(cluster=cluster, actor=request.user, topic=name, rule_id=rule_id)
    except ConsoleError as exc:
        messages.error(request, str(exc))
    return redirect("messages:settings", cluster_id=cluster.pk, name=name)


@page(VIEWER)
def schema_list(request):
    form = SchemaForm(request.POST or None)
    if request.method == "POST":
        if not has_role(request.user, OPERATOR):
            return refused(request, "Registering schemas needs the operator role.", needs_role=OPERATOR)
        if form.is_valid():
            try:
                services.schema_register(actor=request.user, **form.cleaned_data)
            except ConsoleError as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(request, "Schema registered.")
                return redirect("schemas")
    return render(request, "messages/schemas.html", {"form": form, "schemas": selectors.registered_schemas()},
                  status=400 if form.errors else 200)
