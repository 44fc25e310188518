#!/usr/bin/python3
# test/orm/django_recipe.py: docs/orm.md's Django recipe, run against a
# real server by test/t/100_orm.pl.  The server comes from libpq's
# environment (PGHOST, PGPORT, PGUSER, PGDATABASE); the database has the
# shardid extension.  Migrates the app djshop (test/orm/djshop), inserts
# through the ORM, and prints what the TAP test checks, one "name=value"
# line each; any error exits non-zero.
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import django
from django.conf import settings

settings.configure(
    DATABASES={'default': {
        'ENGINE': 'django.db.backends.postgresql',
        'NAME': os.environ['PGDATABASE'],
        'USER': os.environ['PGUSER'],
        'HOST': os.environ['PGHOST'],
        'PORT': os.environ['PGPORT'],
    }},
    INSTALLED_APPS=['djshop'],
    USE_TZ=True,
)
django.setup()

from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from djshop.models import Item


def statements(captured):
    # the SQL sent, transaction control aside (Django 4.2 with psycopg 3
    # logs the BEGIN and COMMIT around bulk_create)
    return [q['sql'] for q in captured
            if q['sql'].split()[0].upper() not in ('BEGIN', 'COMMIT', 'SAVEPOINT', 'RELEASE')]


call_command('migrate', 'djshop', verbosity=0)
print('django_version=%s' % django.get_version())

# One insert: one statement, the key read back by its RETURNING.
with CaptureQueriesContext(connection) as insert:
    item = Item.objects.create(name='first')
sent = statements(insert.captured_queries)
print('create_statements=%d' % len(sent))
print('create_returning=%d' % ('RETURNING' in sent[0]))
print('id=%d' % item.id)

# bulk_create: one statement for all rows, every key read back.
with CaptureQueriesContext(connection) as bulk:
    items = Item.objects.bulk_create([Item(name='bulk%d' % i) for i in range(3)])
sent = statements(bulk.captured_queries)
print('bulk_statements=%d' % len(sent))
print('bulk_returning=%d' % ('RETURNING' in sent[0]))
print('bulk_ids=%s' % ','.join(str(i.id) for i in items))

# JSON out: the key as a string.
print('json=%s' % json.dumps(item.as_json_dict()))
# The naive way, the key as a JSON number: Python writes every digit, but a
# JavaScript client (JSON.parse) reads it as a double.
naive = json.dumps({'id': item.id, 'name': item.name})
print('naive_json=%s' % naive)
print('naive_as_javascript_reads_it=%d' % int(json.loads(naive, parse_int=float)['id']))
