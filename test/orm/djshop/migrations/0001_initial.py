# The table, its sequence, and the key's DEFAULT: shardid_next(7, seq).
# (CREATE EXTENSION shardid is the DBA's, done before: it needs the
# library preloaded and, for a non-superuser, the right to create it.)
from django.db import migrations, models

import djshop.fields


class Migration(migrations.Migration):
    initial = True
    dependencies = []
    operations = [
        migrations.RunSQL(
            'CREATE SEQUENCE djshop_item_id_seq',
            reverse_sql='DROP SEQUENCE djshop_item_id_seq'),
        migrations.CreateModel(
            name='Item',
            fields=[
                ('id', djshop.fields.ShardIdField(primary_key=True, serialize=False)),
                ('name', models.TextField()),
            ],
        ),
        migrations.RunSQL(
            ["ALTER TABLE djshop_item ALTER COLUMN id"
             " SET DEFAULT shardid_next(7, 'djshop_item_id_seq'::regclass)",
             'ALTER SEQUENCE djshop_item_id_seq OWNED BY djshop_item.id'],
            reverse_sql=['ALTER TABLE djshop_item ALTER COLUMN id DROP DEFAULT']),
    ]
