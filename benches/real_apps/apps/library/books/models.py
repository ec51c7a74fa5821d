"""One model with the fields an admin form has: text, a choice, a date, a box."""
from django.db import models


class Book(models.Model):
    GENRES = [("novel", "Novel"), ("scifi", "Science fiction"), ("history", "History"), ("poetry", "Poetry")]
    title = models.CharField(max_length=200)
    author = models.CharField(max_length=200)
    genre = models.CharField(max_length=20, choices=GENRES, default="novel")
    published = models.DateField(null=True, blank=True)
    in_stock = models.BooleanField(default=False)

    def __str__(self):
        return self.title
