# djshop/models.py: a model keyed by shardid.
from django.db import models

from djshop.fields import ShardIdField


class Item(models.Model):
    id = ShardIdField(primary_key=True)
    name = models.TextField()

    def as_json_dict(self):
        # IDs leave as strings: a JavaScript client reads JSON numbers as
        # doubles, exact only up to 2^53, and shardid's IDs are beyond it.
        return {'id': str(self.id), 'name': self.name}
