#!/usr/bin/python3
# test/orm/sqlalchemy_recipe.py: docs/orm.md's SQLAlchemy recipe, run
# against a real server by test/t/100_orm.pl.  The server comes from
# libpq's environment (PGHOST, PGPORT, PGUSER, PGDATABASE); the database
# has the shardid extension.  Creates the table (its DDL from the model),
# inserts through the ORM, and prints what the TAP test checks, one
# "name=value" line each; any error exits non-zero.
#
# Driver: psycopg2, SQLAlchemy's default PostgreSQL driver (Debian 12 has
# SQLAlchemy 1.4, whose dialects do not include psycopg 3).
import json
import sys

import sqlalchemy
from sqlalchemy import (BigInteger, Column, MetaData, Sequence, Text,
                        create_engine, event, text)
from sqlalchemy.orm import Session, declarative_base

metadata = MetaData()
Base = declarative_base(metadata=metadata)

# The sequence shardid_next takes its low 10 bits from: a sequence of the
# metadata, not of the column (a Sequence on the column would make the key
# nextval() itself).  create_all makes it before the tables.
order_id_seq = Sequence('orders_id_seq', metadata=metadata)


class Order(Base):
    __tablename__ = 'orders'
    id = Column(BigInteger, primary_key=True, autoincrement=False,
                server_default=text("shardid_next(5, 'orders_id_seq'::regclass)"))
    item = Column(Text, nullable=False)

    def as_json_dict(self):
        # the key as a string: JavaScript reads JSON numbers as doubles
        return {'id': str(self.id), 'item': self.item}


# libpq finds the server from the environment: an empty URL
engine = create_engine('postgresql+psycopg2://', future=True)
metadata.create_all(engine)
print('sqlalchemy_version=%s' % sqlalchemy.__version__)

statements = []


@event.listens_for(engine, 'before_cursor_execute')
def count_statement(conn, cursor, statement, parameters, context, executemany):
    statements.append(statement)


with Session(engine) as session:
    order = Order(item='first')
    session.add(order)
    statements.clear()
    session.flush()          # the INSERT; its RETURNING fills order.id
    flushed = list(statements)
    key = order.id           # no query: the key is already there
    after = list(statements)
    body = json.dumps(order.as_json_dict())
    session.commit()

print('insert_statements=%d' % len(after))
print('insert_returning=%d' % ('RETURNING' in flushed[0]))
print('id=%d' % key)
print('json=%s' % body)
naive = json.dumps({'id': key, 'item': 'first'})
print('naive_json=%s' % naive)
print('naive_as_javascript_reads_it=%d' % int(json.loads(naive, parse_int=float)['id']))
