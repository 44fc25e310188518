# djshop: the Django app of docs/orm.md's Django recipe, run by
# test/orm/django_recipe.py (test/t/100_orm.pl).
