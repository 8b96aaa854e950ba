"""The course in other languages: gettext catalogs of the notebooks' text, and the releases made from them."""
