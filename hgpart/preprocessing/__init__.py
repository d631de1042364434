"""Preprocessing before the V-cycle: community detection on the star expansion (:mod:`.communities`), with its
host builder (:mod:`.host`), its device twin (:mod:`.device`) and the weight rule they share (:mod:`.common`)."""
