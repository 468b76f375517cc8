"""JSON: the Alerts page's data (`GET /api/clusters/<id>/alerts`): rules with their last
values, open alerts (each with the end of the silence covering it), history and active
silences; "firing" counts the firing alerts no silence covers, "silenced" the others.
Webhook URLs are shown as stored (their secrets are placeholders), never resolved."""
from __future__ import annotations

from console.accounts.roles import VIEWER
from console.alerts import selectors
from console.clusters.selectors import cluster_get
from console.web import json_api


@json_api(VIEWER)
def alerts_api(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    counts = selectors.firing_counts(cluster_id=cluster.pk)
    return {
        "firing": counts.firing, "silenced": counts.silenced,
        "rules": [{"id": r.rule.pk, "name": r.rule.name, "kind": r.rule.kind, "target_type": r.rule.target_type,
                   "target": r.rule.target, "threshold": r.rule.threshold, "statuses": r.rule.statuses,
                   "for_seconds": r.rule.for_seconds, "enabled": r.rule.enabled,
                   "last_fired_at": r.rule.last_fired_at, "last_value": r.rule.last_value,
                   "values": list(r.values), "open_alerts": r.open_alerts, "firing": r.firing, "silenced": r.silenced,
                   "receivers": [x.name for x in r.rule.receivers.all()]} for r in selectors.rule_rows(cluster=cluster)],
        "alerts": [{"id": a.pk, "rule": a.rule.name, "subject": a.subject, "state": a.state, "value": a.value,
                    "pending_since": a.pending_since, "fired_at": a.fired_at, "silenced_until": a.silenced_until,
                    "acknowledged_by": a.acknowledged_by.username if a.acknowledged_by else None}
                   for a in selectors.alerts_open(cluster=cluster)],
        "history": [{"rule": e.alert.rule.name, "subject": e.alert.subject, "kind": e.kind, "value": e.value,
                     "at": e.at, "by": e.by, "silenced": e.silenced} for e in selectors.history(cluster=cluster)],
        "silences": [{"id": s.pk, "rule": s.rule.name, "subject": s.subject, "until": s.until, "reason": s.reason,
                      "created_by": s.created_by} for s in selectors.silences_active(cluster=cluster)],
    }
