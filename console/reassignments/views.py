"""Reassignment pages: the jobs list with the generate and import forms, the review page of a
plan (and the progress of a job), and the actions. Each view validates, calls one service or
selector, and renders; a ConsoleError from a service becomes a message."""
from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from console.accounts.roles import OPERATOR, VIEWER
from console.clusters.selectors import broker_choices, cluster_get
from console.errors import ConsoleError, InvalidInput, NotFound
from console.reassignments import schedules, selectors, services
from console.reassignments.charts import plan_load_chart
from console.reassignments.forms import (EditMoveForm, GenerateForm, ImportForm, RunForm, ScheduleEditForm,
                                          ScheduleForm)
from console.reassignments.plan_json import export_json, import_json, parse_replica_list
from console.web import page


@page(VIEWER)
def job_list(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    return _render_list(request, cluster, _generate_form(cluster), ImportForm())


def _generate_form(cluster, data=None) -> GenerateForm:
    return GenerateForm(data, brokers=broker_choices(cluster=cluster))


def _render_list(request, cluster, generate_form, import_form, status=200, schedule_form=None):
    jobs = selectors.reassignment_list(cluster=cluster)[:200]
    return render(request, "reassignments/list.html", {
        "cluster": cluster, "jobs": jobs, "generate_form": generate_form, "import_form": import_form,
        "schedules": selectors.schedule_list(cluster=cluster), "schedule_form": schedule_form or ScheduleForm()},
        status=status)


@page(OPERATOR)
@require_POST
def schedule_create(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    form = ScheduleForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            schedules.schedule_create(cluster=cluster, actor=request.user, name=data["name"], kind=data["kind"],
                                      cron=data["cron"].strip(), run_at=_aware(data["run_at"]),
                                      topics=data["topics"], min_leader_skew_percent=data["min_leader_skew_percent"],
                                      throttle_bytes_per_sec=data["throttle"])
        except ConsoleError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Schedule {data['name']} saved.")
            return redirect("reassignments:list", cluster_id=cluster.pk)
    return _render_list(request, cluster, _generate_form(cluster), ImportForm(), status=400, schedule_form=form)


@page(OPERATOR)
@require_POST
def schedule_edit(request, cluster_id: int, schedule_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    schedule = selectors.schedule_get(cluster=cluster, schedule_id=schedule_id)
    form = ScheduleEditForm(request.POST)
    try:
        if not form.is_valid():
            raise InvalidInput(" ".join(e for errors in form.errors.values() for e in errors))
        data = form.cleaned_data
        schedules.schedule_update(schedule=schedule, actor=request.user, cron=data["cron"].strip() or None,
                                  enabled=data["enabled"], min_leader_skew_percent=data["min_leader_skew_percent"])
    except ConsoleError as exc:
        messages.error(request, f"Schedule not changed: {exc}")
    else:
        messages.success(request, f"Schedule {schedule.name} updated.")
    return redirect("reassignments:list", cluster_id=cluster.pk)


@page(OPERATOR)
@require_POST
def schedule_delete(request, cluster_id: int, schedule_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    schedule = selectors.schedule_get(cluster=cluster, schedule_id=schedule_id)
    schedules.schedule_delete(schedule=schedule, actor=request.user)
    messages.success(request, f"Schedule {schedule.name} deleted.")
    return redirect("reassignments:list", cluster_id=cluster.pk)


def _aware(value):
    if value is not None and timezone.is_naive(value):
        return timezone.make_aware(value, timezone.utc)
    return value


@page(OPERATOR)
@require_POST
def plan_generate(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    form = _generate_form(cluster, request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            job = services.plan_generate(cluster=cluster, actor=request.user, name=data["name"],
                                         scenario=data["scenario"], topics=data["topics"] or None,
                                         brokers=data["brokers"], replication_factor=data["replication_factor"],
                                         bytes_tolerance=data["bytes_tolerance_percent"] / 100)
        except ConsoleError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("reassignments:detail", cluster_id=cluster.pk, job_id=job.pk)
    return _render_list(request, cluster, form, ImportForm(), status=400)


@page(OPERATOR)
@require_POST
def plan_import(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    form = ImportForm(request.POST)
    if form.is_valid():
        try:
            assignment = import_json(form.cleaned_data["document"])
            job = services.plan_from_assignment(cluster=cluster, actor=request.user, name=form.cleaned_data["name"],
                                                assignment=assignment)
        except ConsoleError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("reassignments:detail", cluster_id=cluster.pk, job_id=job.pk)
    return _render_list(request, cluster, _generate_form(cluster), form, status=400)


@page(VIEWER)
def job_detail(request, cluster_id: int, job_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    job = selectors.reassignment_get(cluster=cluster, job_id=job_id)
    return _render_detail(request, cluster, job, RunForm())


def _render_detail(request, cluster, job, run_form, status=200):
    brokers = job.summary.get("brokers", [])
    moves = list(job.moves.all()[:selectors.MOVES_SHOWN])
    return render(request, "reassignments/detail.html", {
        "cluster": cluster, "job": job, "summary": job.summary, "brokers": brokers, "moves": moves,
        "moves_hidden": max(0, job.summary.get("moves", 0) - len(moves)), "busiest_bytes": selectors.busiest_bytes(job),
        "throttled_duration": selectors.throttled_duration(job),
        "progress": selectors.job_progress(job=job), "timing": selectors.job_timing(job=job), "run_form": run_form,
        "load_chart": plan_load_chart(brokers=brokers) if brokers else None}, status=status)


@page(OPERATOR)
@require_POST
def job_run(request, cluster_id: int, job_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    job = selectors.reassignment_get(cluster=cluster, job_id=job_id)
    form = RunForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        run_at = _aware(data["run_at"])
        try:
            services.job_start(job=job, actor=request.user, throttle_bytes_per_sec=form.throttle_bytes(),
                               per_broker_limit=data["per_broker_limit"], cluster_limit=data["cluster_limit"],
                               elect_preferred=data["elect_preferred"], run_at=run_at)
        except ConsoleError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("reassignments:detail", cluster_id=cluster.pk, job_id=job.pk)
    return _render_detail(request, cluster, job, form, status=400)


def _control(service, verb: str):
    @page(OPERATOR)
    @require_POST
    def view(request, cluster_id: int, job_id: int):
        cluster = cluster_get(cluster_id=cluster_id)
        job = selectors.reassignment_get(cluster=cluster, job_id=job_id)
        try:
            service(job=job, actor=request.user)
        except ConsoleError as exc:
            messages.error(request, f"Not {verb}: {exc}")
        else:
            messages.success(request, f"Job {verb}.")
        return redirect("reassignments:detail", cluster_id=cluster.pk, job_id=job.pk)
    return view


job_pause = _control(services.job_pause, "paused")
job_resume = _control(services.job_resume, "resumed")
job_cancel = _control(services.job_cancel, "cancelling")


@page(OPERATOR)
@require_POST
def move_edit(request, cluster_id: int, job_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    job = selectors.reassignment_get(cluster=cluster, job_id=job_id)
    form = EditMoveForm(request.POST)
    try:
        if not form.is_valid():
            raise InvalidInput(" ".join(e for errors in form.errors.values() for e in errors))
        data = form.cleaned_data
        where = f"{data['topic']}-{data['partition']}"
        replicas = parse_replica_list(data["replicas"], where=where)
        services.plan_edit_move(job=job, actor=request.user, topic=data["topic"], partition=data["partition"],
                                replicas=replicas)
    except ConsoleError as exc:
        messages.error(request, f"Not changed: {exc}")
    else:
        messages.success(request, f"{where} now goes to {', '.join(map(str, replicas))}.")
    return redirect("reassignments:detail", cluster_id=cluster.pk, job_id=job.pk)


@page(VIEWER)
def job_export(request, cluster_id: int, job_id: int, which: str):
    """The plan as kafka-reassign-partitions.sh JSON: `proposed`, or `current` (to roll back)."""
    if which not in ("proposed", "current"):
        raise NotFound("Export `proposed` or `current`.")
    cluster = cluster_get(cluster_id=cluster_id)
    job = selectors.reassignment_get(cluster=cluster, job_id=job_id)
    field = "replicas_after" if which == "proposed" else "replicas_before"
    assignment = {(t, p): r for t, p, r in job.moves.values_list("topic", "partition", field)}
    response = HttpResponse(export_json(assignment), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="reassignment-{job.pk}-{which}.json"'
    return response
