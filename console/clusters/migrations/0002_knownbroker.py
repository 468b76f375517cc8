"""KnownBroker moves from the brokers app to clusters; the table (brokers_knownbroker) stays."""
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('clusters', '0001_initial'),
        ('brokers', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='KnownBroker',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('broker_id', models.IntegerField()),
                        ('host', models.CharField(max_length=255)),
                        ('port', models.IntegerField()),
                        ('rack', models.CharField(blank=True, default='', max_length=255)),
                        ('first_seen', models.DateTimeField(auto_now_add=True)),
                        ('last_seen', models.DateTimeField()),
                        ('cluster', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='known_brokers', to='clusters.cluster')),
                    ],
                    options={
                        'db_table': 'brokers_knownbroker',
                        'ordering': ['cluster', 'broker_id'],
                        'constraints': [models.UniqueConstraint(fields=('cluster', 'broker_id'), name='one_row_per_broker')],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
