"""The admin's list: searchable, filterable by genre."""
from django.contrib import admin

from .models import Book


@admin.register(Book)
class BookAdmin(admin.ModelAdmin):
    list_display = ("title", "author", "genre", "in_stock")
    list_filter = ("genre", "in_stock")
    search_fields = ("title", "author")
