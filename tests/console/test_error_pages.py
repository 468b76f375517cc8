"""The error pages (console/web.py, templates/403.html, 404.html, 500.html, error.html) say it
once: one heading and never the status code twice, a sentence on what went wrong (for a
refusal, what was refused and the role it needs), and a way back."""
import re

from django.test import Client, RequestFactory
from django.urls import reverse

from console.accounts.roles import VIEWER
from console.clusters.services import cluster_create
from console.errors import InvalidInput
from console.kafka_gateway.errors import error_for_code
from console.web import not_authorized, page, server_error
from tests.support.engine_process import free_port_range


def said(html: str) -> dict:
    main = re.search(r"<main>(.*)</main>", html, re.S).group(1)
    back = re.search(r'<a id="error-back" href="([^"]*)">([^<]*)</a>', main)
    return {"title": re.search(r"<title>(.*?)</title>", html, re.S).group(1),
            "headings": re.findall(r"<h1>(.*?)</h1>", main),
            "text": re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", main)).strip(),
            "back": back.groups() if back else None}


def test_a_page_a_role_does_not_open_says_which_role_it_needs_and_links_back(db, viewer_client):
    down = cluster_create(name="nowhere", bootstrap_servers=f"127.0.0.1:{free_port_range(1)}")
    url = reverse("topics:create", args=[down.pk])
    came_from = f"http://testserver/clusters/{down.pk}/topics/"
    response = viewer_client.get(url, HTTP_REFERER=came_from)
    page = said(response.content.decode())
    assert response.status_code == 403
    assert page["title"] == "Not allowed · Kafka console" and page["headings"] == ["Not allowed"]
    assert page["text"].count("403") == 1
    assert "This page needs the operator role. You are signed in as viewer, with the viewer role; a console " \
           "admin can give you the operator role." in page["text"]
    assert page["back"] == (came_from, "Back to the previous page")
    # A referer from elsewhere is no way back: the cluster the address names is.
    page = said(viewer_client.post(url, HTTP_REFERER="https://elsewhere.example/").content.decode())
    assert "This change needs the operator role." in page["text"]
    assert page["back"] == (f"/clusters/{down.pk}/", "Back to nowhere")


def test_a_form_refused_for_its_csrf_token_gets_the_consoles_page(db, users):
    client = Client(enforce_csrf_checks=True)
    client.force_login(users["operator"])
    response = client.post(reverse("logout"))
    page = said(response.content.decode())
    assert response.status_code == 403 and page["headings"] == ["Not allowed"]
    assert page["text"].count("403") == 1 and "Forbidden" not in response.content.decode()
    assert "Reload the form&#x27;s page and send it again." in page["text"]
    assert "Log out" in response.content.decode()           # the layout, with its navigation
    anonymous = Client(enforce_csrf_checks=True).post(reverse("login"), {"username": "x", "password": "y"})
    assert anonymous.status_code == 403 and said(anonymous.content.decode())["back"] == ("/", "Back to the clusters")


def test_what_the_cluster_refused_names_kafkas_error_once(db, users):
    request = RequestFactory().get("/")
    request.user = users["viewer"]
    exc = error_for_code(29, what="reading topic orders")
    page = said(not_authorized(request, exc).content.decode())
    assert page["headings"] == ["Not authorized"] and page["text"].count("403") == 1
    assert page["text"].count("TOPIC_AUTHORIZATION_FAILED (29)") == 1 and "Kafka error:" not in page["text"]


def test_not_found_and_server_error_say_their_code_once(db, viewer_client, users):
    page = said(viewer_client.get("/no/such/page/").content.decode())
    assert page["title"] == "Not found · Kafka console" and page["headings"] == ["Not found"]
    assert page["text"].count("404") == 1 and page["back"] == ("/", "Back to the clusters")
    request = RequestFactory().get("/")
    request.user = users["viewer"]
    page = said(server_error(request).content.decode())
    assert page["title"] == "Server error · Kafka console" and page["headings"] == ["Server error"]
    assert page["text"].count("500") == 1 and "Traceback" not in page["text"]


def test_an_address_that_asks_for_what_cannot_be_is_a_400_not_an_outage(db, users):
    @page(VIEWER)
    def view(request):
        raise InvalidInput("Topic orders has no partition 9 (it has 6).")
    request = RequestFactory().get("/clusters/1/topics/orders/")
    request.user = users["viewer"]
    response = view(request)
    shown = said(response.content.decode())
    assert response.status_code == 400 and shown["headings"] == ["Cannot show what this address asks for"]
    assert shown["text"].count("400") == 1 and "Topic orders has no partition 9 (it has 6)." in shown["text"]
