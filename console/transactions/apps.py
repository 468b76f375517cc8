from django.apps import AppConfig


class TransactionsConfig(AppConfig):
    """Transactions: every transactional id, hanging transactions, and their abort. No models: Kafka owns them."""

    name = "console.transactions"
    label = "transactions"
