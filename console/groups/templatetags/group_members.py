"""`{% load group_members %}`, then `{{ m.client_host|client_host }}`: a member's host as
console.groups.members shows it ("127.0.0.1", not Kafka's "/127.0.0.1")."""
from django import template

from console.groups.members import client_host_shown

register = template.Library()
register.filter("client_host", client_host_shown)
