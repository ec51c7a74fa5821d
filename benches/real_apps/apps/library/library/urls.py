"""The admin at /admin/, and /reset/: the suite puts the books back as they
were before each task (a bench site only; nothing else answers)."""
import datetime

from django.contrib import admin
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.urls import path

from books.models import Book

BOOKS = [
    ("Dune", "Frank Herbert", "scifi", datetime.date(1965, 8, 1), True),
    ("Middlemarch", "George Eliot", "novel", datetime.date(1871, 12, 1), True),
    ("The Guns of August", "Barbara Tuchman", "history", datetime.date(1962, 1, 1), False),
    ("Ariel", "Sylvia Plath", "poetry", datetime.date(1965, 3, 1), True),
]


def reset(_request):
    Book.objects.all().delete()
    for title, author, genre, published, in_stock in BOOKS:
        Book.objects.create(title=title, author=author, genre=genre, published=published, in_stock=in_stock)
    if not User.objects.filter(username="admin").exists():
        User.objects.create_superuser("admin", "admin@example.com", "shelf-keeper-42")
    return HttpResponse("reset")


urlpatterns = [path("admin/", admin.site.urls), path("reset/", reset)]
