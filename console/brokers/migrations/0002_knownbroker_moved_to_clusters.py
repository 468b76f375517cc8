"""KnownBroker now belongs to the clusters app (same table): forget it here, keep the table."""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('brokers', '0001_initial'),
        ('clusters', '0002_knownbroker'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name='KnownBroker')],
            database_operations=[],
        ),
    ]
