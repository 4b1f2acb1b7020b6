"""Accounts beyond sign-in: career statistics, ratings, profiles and the leaderboard."""
