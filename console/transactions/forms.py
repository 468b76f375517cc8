"""The abort form: which open transaction (`kafka-transactions.sh abort --topic --partition
--start-offset`). It bounds the input; the service decides whether the transaction is hanging."""
from __future__ import annotations

from django import forms

MAX_OFFSET = 2**63 - 1
MAX_PARTITION = 2**31 - 1


class AbortForm(forms.Form):
    topic = forms.RegexField(regex=r"^[a-zA-Z0-9._-]{1,249}$", max_length=249,
                             error_messages={"invalid": "A topic name is 1-249 of a-z, A-Z, 0-9, '.', '_' and '-'."})
    partition = forms.IntegerField(min_value=0, max_value=MAX_PARTITION)
    start_offset = forms.IntegerField(min_value=0, max_value=MAX_OFFSET,
                                      help_text="The first offset of the transaction on that partition.")
