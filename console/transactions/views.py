"""The Transactions page and the abort of a hanging transaction. Each view validates, calls one
selector or service, and renders; a ConsoleError from the service becomes a message on the form."""
from django.contrib import messages
from django.shortcuts import redirect, render

from console.accounts.roles import ADMIN, VIEWER, has_role
from console.clusters.gateway import cluster_gateway
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError
from console.transactions import selectors, services
from console.transactions.forms import AbortForm
from console.web import page


@page(VIEWER)
def transaction_list(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    view = selectors.transaction_list(cluster=cluster)
    return render(request, "transactions/list.html", {"cluster": cluster, "view": view,
                                                      "can_abort": has_role(request.user, ADMIN)})


@page(ADMIN)
def transaction_abort(request, cluster_id: int):
    """GET: the confirmation page, naming the transaction as the partition reports it now;
    POST (from that page): abort it."""
    cluster = cluster_get(cluster_id=cluster_id)
    form = AbortForm(request.POST if request.method == "POST" else request.GET)
    found = None
    if form.is_valid():
        topic, partition, start = (form.cleaned_data[k] for k in ("topic", "partition", "start_offset"))
        try:
            if request.method == "POST":
                aborted = services.transaction_abort(cluster=cluster, actor=request.user, topic=topic,
                                                     partition=partition, start_offset=start)
                messages.success(request, f"Transaction of producer {aborted.producer_id} on {topic}-{partition} "
                                          f"(from offset {start}) aborted.")
                return redirect("transactions:list", cluster_id=cluster.pk)
            with cluster_gateway(cluster) as gw:
                found = selectors.hanging_transaction(gw=gw, topic=topic, partition=partition, start_offset=start)
            if found is None:
                form.add_error(None, f"No hanging transaction starts at offset {start} of {topic}-{partition}.")
        except ConsoleError as exc:
            form.add_error(None, str(exc))
    return render(request, "transactions/abort.html", {"cluster": cluster, "form": form, "found": found},
                  status=400 if form.errors else 200)
